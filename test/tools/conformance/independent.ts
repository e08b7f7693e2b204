import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A second implementation of the API, written from the API document alone: its own models, key and
 * bodies, no error envelope, no x-request-id, no fault headers, and only the rules the document
 * states. The documented profile must pass it; each `Plant` breaks one rule on purpose. Two readings of the
 * document run on it too: `lenient` (its `must` rules alone) and `strict` (refusing what it is silent on); the
 * documented profile must pass both.
 */
export interface Plant {
  acceptBasic?: boolean;
  meWithoutKey?: boolean;
  invalidStatus?: number;
  temperatureMax?: number;
  durations?: number[];
  imageUrlOptional?: boolean;
  ignoreN?: boolean;
  pitchUnchecked?: boolean;
  textMax?: number;
  dataUriRejected?: boolean;
  /**
   * Only the document's `must` rules: any model, voice or voice_id string, a data URI of any media type (its
   * bytes still an image: the document's rule for `image` is "Base64-encoded input image").
   */
  lenient?: boolean;
  /** Beyond the document: unknown fields, odd voice shapes and non-image data URIs are refused. */
  strict?: boolean;
  /** Compares the key by prefix: a token that starts the key, or that the key starts, is let in. */
  prefixKey?: boolean;
  /** Clamps temperature into 0 to 2 instead of refusing it. */
  clampTemperature?: boolean;
  /** Fills a missing image generation prompt in instead of refusing the request. */
  fillPrompt?: boolean;
  /** Reads a video duration given as a numeric string ("8") as that number. */
  coerceDuration?: boolean;
}

const KEY = 'indie-key-1234567890';
type Body = Record<string, unknown>;
type Rule = (b: Body) => string | undefined;

const str =
  (f: string, required = false): Rule =>
  (b) =>
    b[f] === undefined
      ? required
        ? `${f} is required`
        : undefined
      : typeof b[f] === 'string'
        ? undefined
        : `${f} must be a string`;
const num =
  (f: string, min = -Infinity, max = Infinity): Rule =>
  (b) => {
    const v = b[f];
    if (v === undefined) return undefined;
    return typeof v !== 'number' ? `${f} must be a number` : v < min || v > max ? `${f} out of range` : undefined;
  };
const oneOf =
  (f: string, values: unknown[], required = false): Rule =>
  (b) =>
    b[f] === undefined
      ? required
        ? `${f} is required`
        : undefined
      : values.includes(b[f])
        ? undefined
        : `${f} not allowed`;
const chars = (s: unknown) => (typeof s === 'string' ? [...s].length : 0);
const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

// An image as the document shows it: base64, or a data URI with an image media type and the base64
// marker, of bytes that start like a PNG, JPEG, GIF or WebP file.
const MAGIC = [
  Buffer.from('89504e470d0a1a0a', 'hex'),
  Buffer.from('ffd8ff', 'hex'),
  Buffer.from('GIF8'),
  Buffer.from('RIFF'),
];
function isImage(v: unknown, anyMediaType = false): boolean {
  if (typeof v !== 'string') return false;
  const prefix = anyMediaType ? /^(?:data:[^;,]*;base64,)?/ : /^(?:data:image\/[a-z0-9.+-]+;base64,)?/i;
  const m = new RegExp(`${prefix.source}([A-Za-z0-9+/]+={0,2})$`, 'i').exec(v);
  if (!m || m[1]!.length % 4 !== 0) return false;
  const bytes = Buffer.from(m[1]!, 'base64');
  return MAGIC.some((magic) => bytes.subarray(0, magic.length).equals(magic));
}

// The fields each request names in the document; the strict implementation refuses any other.
const KNOWN: Record<string, string[]> = {
  '/text-provider/chat/completions': ['model', 'messages', 'temperature', 'top_p', 'max_tokens', 'stream', 'stop'],
  '/text-provider/images/generations': ['model', 'prompt', 'size', 'quality', 'style', 'n'],
  '/image-provider/image-edit': ['prompt', 'image'],
  '/video-provider/generate': ['model', 'mode', 'prompt', 'image_url', 'duration', 'resolution', 'seed'],
  '/voice-provider/tts': ['text', 'voice_id', 'model_id', 'voice_settings'],
  '/cloud-provider/speech': ['text', 'voice', 'style', 'rate', 'pitch'],
};
const unknownFields =
  (path: string): Rule =>
  (b) => {
    const extra = Object.keys(b).find((k) => !KNOWN[path]!.includes(k));
    return extra === undefined ? undefined : `unknown field ${extra}`;
  };
// A model, voice or voice_id: the named one, or (lenient) any string.
const named = (p: Plant, f: string, value: string): Rule => (p.lenient ? str(f, true) : oneOf(f, [value], true));
const shaped =
  (p: Plant, f: string, shape: RegExp): Rule =>
  (b) =>
    p.strict && typeof b[f] === 'string' && !shape.test(b[f]) ? `${f} has an odd shape` : undefined;
const isUrl = (v: unknown): boolean => typeof v === 'string' && /^[a-z][a-z0-9+.-]*:\S+$/i.test(v) && URL.canParse(v);

function rules(p: Plant): Record<string, Rule[]> {
  return {
    '/text-provider/chat/completions': [
      named(p, 'model', 'indie-chat'),
      (b) =>
        !Array.isArray(b.messages)
          ? 'messages must be an array'
          : b.messages.every((m) => isObject(m) && typeof m.role === 'string' && typeof m.content === 'string')
            ? undefined
            : 'bad message',
      (b) => {
        if (p.clampTemperature && typeof b.temperature === 'number')
          b.temperature = Math.min(2, Math.max(0, b.temperature));
        return num('temperature', 0, p.temperatureMax ?? 2)(b);
      },
      num('top_p', 0, 1),
      num('max_tokens'),
      (b) => (b.stream === undefined || typeof b.stream === 'boolean' ? undefined : 'stream must be a boolean'),
      (b) =>
        b.stop === undefined || (Array.isArray(b.stop) && b.stop.every((s) => typeof s === 'string'))
          ? undefined
          : 'stop must be an array of strings',
    ],
    '/text-provider/images/generations': [
      named(p, 'model', 'indie-image'),
      (b) => {
        if (p.fillPrompt) b.prompt ??= 'an image';
        return str('prompt', true)(b);
      },
      (b) => (chars(b.prompt) > 1000 ? 'prompt too long' : undefined),
      oneOf('size', ['1024x1024', '1792x1024', '1024x1792']),
      oneOf('quality', ['standard', 'hd']),
      oneOf('style', ['natural', 'vivid']),
      num('n', -Infinity, p.ignoreN ? Infinity : 1),
    ],
    '/image-provider/image-edit': [
      str('prompt', true),
      str('image', true),
      (b) => (isImage(b.image, p.lenient) ? undefined : 'image must be a base64 image'),
      (b) => (p.dataUriRejected && String(b.image).startsWith('data:') ? 'no data URIs' : undefined),
    ],
    '/video-provider/generate': [
      named(p, 'model', 'indie-video'),
      oneOf('mode', ['text_to_video', 'image_to_video'], true),
      str('prompt', true),
      str('image_url'),
      (b) => (b.image_url === undefined || isUrl(b.image_url) ? undefined : 'image_url must be a URL'),
      (b) =>
        b.mode === 'image_to_video' && b.image_url === undefined && !p.imageUrlOptional
          ? 'image_url is required'
          : undefined,
      (b) => {
        if (p.coerceDuration && typeof b.duration === 'string' && /^\d+$/.test(b.duration))
          b.duration = Number(b.duration);
        return oneOf('duration', p.durations ?? [4, 8, 16])(b);
      },
      oneOf('resolution', ['768x768', '1280x768', '768x1280']),
      num('seed'),
    ],
    '/voice-provider/tts': [
      str('text', true),
      (b) => (chars(b.text) > (p.textMax ?? 2500) ? 'text too long' : undefined),
      named(p, 'voice_id', 'nova'),
      shaped(p, 'voice_id', /^[a-z][a-z0-9_-]{0,31}$/),
      str('model_id'),
      (b) =>
        b.voice_settings === undefined
          ? undefined
          : !isObject(b.voice_settings)
            ? 'voice_settings must be an object'
            : (num('stability')(b.voice_settings) ?? num('similarity_boost')(b.voice_settings)),
    ],
    '/cloud-provider/speech': [
      str('text', true),
      named(p, 'voice', 'en-GB-IndieNeural'),
      shaped(p, 'voice', /^[a-z]{2,3}-[A-Z]{2}-[A-Za-z0-9]+$/),
      str('style'),
      num('rate', -50, 50),
      num('pitch', p.pitchUnchecked ? -Infinity : -50, p.pitchUnchecked ? Infinity : 50),
    ],
  };
}

/** Starts the independent implementation on a free port. */
export async function startIndependent(
  plant: Plant = {},
): Promise<{ url: string; key: string; close(): Promise<void> }> {
  const table = rules(plant);
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: string, type = 'application/json') =>
      res.writeHead(status, { 'content-type': type }).end(body);
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      // Routed on the path alone, as any server is: a query string names no other operation.
      const path = (req.url ?? '').split('?')[0]!.replace(/^\/v1(?=\/(text|image|video|voice|cloud)-provider)/, '');
      const auth = req.headers.authorization ?? '';
      const token = (plant.acceptBasic ? /^(?:Bearer|Basic) (\S+)$/ : /^Bearer (\S+)$/).exec(auth)?.[1];
      const known =
        token === KEY ||
        (plant.prefixKey === true && token !== undefined && (KEY.startsWith(token) || token.startsWith(KEY)));
      if (path === '/v1/me' && req.method === 'GET')
        return known || (plant.meWithoutKey && !auth)
          ? send(200, '{"who":"indie"}')
          : send(401, '{"detail":"unauthorized"}');
      const checks = table[path];
      if (!checks || req.method !== 'POST') return send(404, 'not found', 'text/plain');
      if (!known) return send(401, '{"detail":"unauthorized"}');
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        return send(plant.invalidStatus ?? 400, '{"detail":"not json"}');
      }
      const all = plant.strict ? [unknownFields(path), ...checks] : checks;
      const problem = isObject(body) ? all.map((c) => c(body as Body)).find(Boolean) : 'not an object';
      if (problem) return send(plant.invalidStatus ?? 400, JSON.stringify({ detail: problem }));
      if (path.endsWith('/tts') || path.endsWith('/speech'))
        return send(200, 'RIFF-not-really-audio', 'application/octet-stream');
      send(200, '{"status":"done"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    key: KEY,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The flags that point the runner at the independent implementation's models and voices. */
export const INDEPENDENT_FLAGS = [
  '--chat-model',
  'indie-chat',
  '--image-model',
  'indie-image',
  '--image-n-max-1',
  '--video-model',
  'indie-video',
  '--voice-id',
  'nova',
  '--cloud-voice',
  'en-GB-IndieNeural',
];
