import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A second implementation of the API, written from the API document alone: its own models, key and
 * bodies, no error envelope, no x-request-id, no fault headers, and only the rules the document
 * states. The documented profile must pass it; each `Plant` breaks one rule on purpose.
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
function isImage(v: unknown): boolean {
  if (typeof v !== 'string') return false;
  const m = /^(?:data:image\/[a-z0-9.+-]+;base64,)?([A-Za-z0-9+/]+={0,2})$/i.exec(v);
  if (!m || m[1]!.length % 4 !== 0) return false;
  const bytes = Buffer.from(m[1]!, 'base64');
  return MAGIC.some((magic) => bytes.subarray(0, magic.length).equals(magic));
}
const isUrl = (v: unknown): boolean => typeof v === 'string' && /^[a-z][a-z0-9+.-]*:\S+$/i.test(v) && URL.canParse(v);

function rules(p: Plant): Record<string, Rule[]> {
  return {
    '/text-provider/chat/completions': [
      oneOf('model', ['indie-chat'], true),
      (b) =>
        !Array.isArray(b.messages)
          ? 'messages must be an array'
          : b.messages.every((m) => isObject(m) && typeof m.role === 'string' && typeof m.content === 'string')
            ? undefined
            : 'bad message',
      num('temperature', 0, p.temperatureMax ?? 2),
      num('top_p', 0, 1),
      num('max_tokens'),
      (b) => (b.stream === undefined || typeof b.stream === 'boolean' ? undefined : 'stream must be a boolean'),
      (b) =>
        b.stop === undefined || (Array.isArray(b.stop) && b.stop.every((s) => typeof s === 'string'))
          ? undefined
          : 'stop must be an array of strings',
    ],
    '/text-provider/images/generations': [
      oneOf('model', ['indie-image'], true),
      str('prompt', true),
      (b) => (chars(b.prompt) > 1000 ? 'prompt too long' : undefined),
      oneOf('size', ['1024x1024', '1792x1024', '1024x1792']),
      oneOf('quality', ['standard', 'hd']),
      oneOf('style', ['natural', 'vivid']),
      num('n', -Infinity, p.ignoreN ? Infinity : 1),
    ],
    '/image-provider/image-edit': [
      str('prompt', true),
      str('image', true),
      (b) => (isImage(b.image) ? undefined : 'image must be a base64 image'),
      (b) => (p.dataUriRejected && String(b.image).startsWith('data:') ? 'no data URIs' : undefined),
    ],
    '/video-provider/generate': [
      oneOf('model', ['indie-video'], true),
      oneOf('mode', ['text_to_video', 'image_to_video'], true),
      str('prompt', true),
      str('image_url'),
      (b) => (b.image_url === undefined || isUrl(b.image_url) ? undefined : 'image_url must be a URL'),
      (b) =>
        b.mode === 'image_to_video' && b.image_url === undefined && !p.imageUrlOptional
          ? 'image_url is required'
          : undefined,
      oneOf('duration', p.durations ?? [4, 8, 16]),
      oneOf('resolution', ['768x768', '1280x768', '768x1280']),
      num('seed'),
    ],
    '/voice-provider/tts': [
      str('text', true),
      (b) => (chars(b.text) > (p.textMax ?? 2500) ? 'text too long' : undefined),
      oneOf('voice_id', ['nova'], true),
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
      oneOf('voice', ['en-GB-IndieNeural'], true),
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
      if (path === '/v1/me' && req.method === 'GET')
        return token === KEY || (plant.meWithoutKey && !auth)
          ? send(200, '{"who":"indie"}')
          : send(401, '{"detail":"unauthorized"}');
      const checks = table[path];
      if (!checks || req.method !== 'POST') return send(404, 'not found', 'text/plain');
      if (token !== KEY) return send(401, '{"detail":"unauthorized"}');
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        return send(plant.invalidStatus ?? 400, '{"detail":"not json"}');
      }
      const problem = isObject(body) ? checks.map((c) => c(body as Body)).find(Boolean) : 'not an object';
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
