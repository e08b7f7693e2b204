import { operation } from '../contract/operations.js';
import type { Limits } from '../domain/limits.js';
import { audioInfo, mp4Info, pngSize } from './media.js';
import type { Case, CheckName, Exchange, Incomplete } from './types.js';

/**
 * What fetching a media link gave: its bytes (perhaps incomplete), or why there are none. `refused`:
 * the link (or a redirect) points to an address the runner does not fetch; nothing was sent.
 */
export type Media =
  { status: number; contentType: string; body: Buffer; incomplete?: Incomplete } | { error: string; refused?: true };

/** What the checks ask of a media link's fetch: the run's timeout and cap, and what no link may reach. */
export interface MediaRequest {
  readonly timeoutMs: number;
  readonly maxBytes?: number;
  /** Values no fetched link may contain (the API key): such a link is not fetched at all. */
  readonly secrets?: readonly string[];
  /**
   * Fetch links on loopback and private addresses (see the runner's addresses.ts): true when the target
   * is on one itself or with --media-allow-private. Link-local, unspecified and metadata addresses, never.
   */
  readonly allowPrivate?: boolean;
}

/**
 * Fetches a media link for a check: the conformance runner's fetchMedia, which sends no credential and
 * refuses addresses a client could not reach. The checks know the rules of the bytes, not the network.
 */
export type MediaFetcher = (url: string, how: MediaRequest) => Promise<Media>;

/** A media check's way to a linked file: the fetcher with the run's settings. */
type Download = (url: string) => Promise<Media>;

type Problem = { expected: string; actual: string } | undefined;

const base64Payload = (s: string) => Buffer.from(s.replace(/^data:[^,]*,/, ''), 'base64');

/** A media file's bytes; `note` says it was cut short, for the failure message when its start is not enough. */
type MediaFile = { bytes: Buffer; note: string };
/**
 * Why there is no file: what came instead, and the rule broken when it is not the check's own (an unfetchable link).
 */
type NoFile = { actual: string; expected?: string };

/**
 * The rule a link to an address the runner refuses breaks: a link in an answer is for the API's
 * clients to fetch, and one on a link-local, loopback or private address (from a public target)
 * reaches no client's copy of the file, only whatever that address is on the client's side.
 */
const FETCHABLE =
  "a media link the API's clients can fetch: not on a link-local, unspecified or metadata address, nor on a loopback or private one from a public target";

/**
 * A linked file's bytes, or why there are none. A file cut short (the cap, the timeout) is still
 * judged: a PNG's size and an MP4's movie header sit at its start.
 */
async function linked(url: string, download: Download): Promise<MediaFile | NoFile> {
  const got = await download(url);
  if ('error' in got)
    return got.refused
      ? { expected: FETCHABLE, actual: `${url}: ${got.error}` }
      : { actual: `fetching ${url} failed: ${got.error}` };
  if (got.status !== 200) return { actual: `fetching ${url} answered ${got.status}` };
  return {
    bytes: got.body,
    note: got.incomplete ? ` (the file ${got.incomplete.detail}; judged on its first ${got.body.length} bytes)` : '',
  };
}

/** The bytes behind an image entry: its link fetched, or its b64_json decoded. */
async function imageBytes(
  item: { url?: unknown; b64_json?: unknown },
  download: Download,
): Promise<MediaFile | NoFile> {
  if (typeof item.b64_json === 'string') return { bytes: base64Payload(item.b64_json), note: '' };
  if (typeof item.url !== 'string') return { actual: 'an entry with neither url nor b64_json' };
  return linked(item.url, download);
}

async function checkPng(
  c: Case,
  body: Record<string, unknown> | undefined,
  download: Download,
  defaults: Limits,
): Promise<Problem> {
  const req = (c.request.body ?? {}) as Record<string, unknown>;
  if (operation(c.operation).success.sizeFrom === 'input') {
    const want = pngSize(base64Payload(String(req.image)));
    const got = typeof body?.image === 'string' ? pngSize(base64Payload(body.image)) : 'no image in the body';
    if (typeof want === 'string') return undefined; // the input is not a PNG: nothing to compare with
    if (typeof got === 'string')
      return { expected: `a ${want.width}x${want.height} PNG (the input's size)`, actual: got };
    return got.width === want.width && got.height === want.height
      ? undefined
      : { expected: `a ${want.width}x${want.height} PNG (the input's size)`, actual: `${got.width}x${got.height}` };
  }
  const size = typeof req.size === 'string' ? req.size : defaults.images.defaultSize;
  const n = typeof req.n === 'number' ? req.n : 1;
  const expected = `${n} PNG image${n > 1 ? 's' : ''} of ${size}`;
  const data = Array.isArray(body?.data) ? (body!.data as { url?: unknown; b64_json?: unknown }[]) : [];
  if (data.length !== n) return { expected, actual: `${data.length} entries in data` };
  // A client that asked for b64_json reads b64_json (and one that asked for url, url): a gateway that drops
  // response_format on its way answers in the model's default form, and the client finds nothing.
  const form = req.response_format === 'url' || req.response_format === 'b64_json' ? req.response_format : undefined;
  for (const item of data) {
    if (form && typeof item[form] !== 'string') {
      const other = form === 'url' ? 'b64_json' : 'url';
      return {
        expected: `${expected}, each as ${form} (the request's response_format)`,
        actual: `an entry ${typeof item[other] === 'string' ? `with ${other} instead` : `without ${form}`}`,
      };
    }
    const file = await imageBytes(item, download);
    if ('actual' in file) return { expected: file.expected ?? expected, actual: file.actual };
    const got = pngSize(file.bytes);
    if (typeof got === 'string') return { expected, actual: got + file.note };
    if (`${got.width}x${got.height}` !== size) return { expected, actual: `a PNG of ${got.width}x${got.height}` };
  }
  return undefined;
}

async function checkMp4(
  c: Case,
  body: Record<string, unknown> | undefined,
  download: Download,
  defaults: Limits,
): Promise<Problem> {
  const req = (c.request.body ?? {}) as Record<string, unknown>;
  const duration = typeof req.duration === 'number' ? req.duration : defaults.video.defaultDuration;
  const resolution = typeof req.resolution === 'string' ? req.resolution : defaults.video.defaultResolution;
  const expected = `an MP4 of ${resolution}, about ${duration} s long`;
  const url = (body?.video as { url?: unknown } | null | undefined)?.url;
  if (typeof url !== 'string') return { expected, actual: 'no video.url in the task' };
  const file = await linked(url, download);
  if ('actual' in file) return { expected: file.expected ?? expected, actual: file.actual };
  const info = mp4Info(file.bytes);
  if (typeof info === 'string') return { expected, actual: info + file.note };
  // Encoders round to whole frames and a container may pad the last one.
  if (Math.abs(info.seconds - duration) > Math.max(0.5, duration * 0.05))
    return { expected, actual: `${info.seconds.toFixed(2)} s long` };
  if (info.width !== undefined && `${info.width}x${info.height}` !== resolution)
    return { expected, actual: `${info.width}x${info.height}` };
  return undefined;
}

async function checkAudio(ex: Exchange): Promise<Problem> {
  const type = (ex.headers['content-type'] ?? '').split(';')[0]!.trim();
  const wav = /wav/.test(type);
  const expected = `decodable ${wav ? 'WAV' : 'MP3'} audio with a positive duration`;
  const info = await audioInfo(ex.body, type);
  if (typeof info === 'string') return { expected, actual: info };
  if (!(wav ? /WAVE/i : /MPEG/i).test(info.container)) return { expected, actual: `a ${info.container} file` };
  return info.seconds > 0 ? undefined : { expected, actual: `a duration of ${info.seconds} s` };
}

/** The media check of a successful response: PNG size, MP4 duration and size, or decodable audio; `defaults` (the
 * checked fixtures/limits.json) gives the mock's defaults for what a request leaves out. */
export async function checkMedia(
  check: CheckName,
  c: Case,
  ex: Exchange,
  body: unknown,
  download: Download,
  defaults: Limits,
): Promise<Problem> {
  const json = body && typeof body === 'object' ? (body as Record<string, unknown>) : undefined;
  switch (check) {
    case 'png-size':
      return checkPng(c, json, download, defaults);
    case 'mp4':
      return checkMp4(c, json, download, defaults);
    case 'audio':
      return checkAudio(ex);
    default:
      return undefined;
  }
}
