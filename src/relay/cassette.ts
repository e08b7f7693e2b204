// Cassettes: one JSON file per recorded exchange, named by a hash of the normalised request.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Operation } from '../contract/operations.js';
import { forbiddenKeyAt, forbiddenKeyMessage } from '../lib/keys.js';

/** The version of the cassette format; a reader refuses others. */
export const CASSETTE_VERSION = 1;

/** One server-sent event as it arrived: its data, and its time in ms from the response start (the head). */
export interface RecordedEvent {
  readonly t: number;
  readonly data: string;
}

/** A response body: text (JSON, errors), base64 (other bytes), or a media file beside the cassette. */
export type RecordedBody = { readonly text: string } | { readonly base64: string } | { readonly file: string };

/** What the hash is made of: the request as far as it decides the answer. */
interface NormalisedRequest {
  readonly method: string;
  /** The path without a leading /v1, with its query (parameters sorted). */
  readonly path: string;
  /** The control headers of the operation that change the answer (lower-case names). */
  readonly headers: Readonly<Record<string, string>>;
  /** The JSON body, keys sorted at every level, without the fields that do not change the answer. */
  readonly body?: unknown;
}

/** One cassette file. */
export interface Cassette {
  readonly version: number;
  readonly hash: string;
  readonly operation: string;
  readonly request: NormalisedRequest;
  /** The upstream's base URL: media links in the body that start with it are served by the mock that replays. */
  readonly upstream: string;
  readonly recordedAt: string;
  readonly response: {
    readonly status: number;
    readonly headers: Readonly<Record<string, string>>;
    /** A non-streamed body. */
    readonly body?: RecordedBody;
    /** A streamed body: each event with its offset from the response start. */
    readonly events?: readonly RecordedEvent[];
    /** For streams: when the stream ended, in ms from the response start. */
    readonly endMs?: number;
  };
}

/**
 * Request body fields left out of the hash: they never change the answer (`user` is an opaque end-user id).
 * `stream_options` stays in: `include_usage` adds a usage chunk, so it does change the stream.
 */
const IGNORED_BODY_FIELDS: ReadonlySet<string> = new Set(['user']);

/** Control headers that change only timing, never the answer: left out of the hash. */
const TIMING_HEADERS: ReadonlySet<string> = new Set(['x-mock-pacing']);

/** A JSON value with the keys of every object sorted, so the same request always serialises the same. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = canonical((value as Record<string, unknown>)[key]);
  return out;
}

/** The path an exchange is keyed by: no /v1 prefix, the query's parameters sorted. */
export function normalisedPath(url: string): string {
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q)).replace(/^\/v1(?=\/)/, '');
  if (q < 0) return path;
  const params = new URLSearchParams(url.slice(q + 1));
  params.sort();
  const query = params.toString();
  return query ? `${path}?${query}` : path;
}

/** The request as the hash sees it. */
export function normaliseRequest(
  op: Operation,
  method: string,
  url: string,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  body: Record<string, unknown> | undefined,
): NormalisedRequest {
  const controls: Record<string, string> = {};
  for (const name of op.headers ?? []) {
    const lower = name.toLowerCase();
    const value = headers[lower];
    if (TIMING_HEADERS.has(lower) || value === undefined) continue;
    controls[lower] = (Array.isArray(value) ? value.join(', ') : value).trim();
  }
  const hashed = body && Object.fromEntries(Object.entries(body).filter(([k]) => !IGNORED_BODY_FIELDS.has(k)));
  return {
    method: method.toUpperCase(),
    path: normalisedPath(url),
    headers: canonical(controls) as Record<string, string>,
    ...(hashed ? { body: canonical(hashed) } : {}),
  };
}

/** The hash of a normalised request: 24 hex digits of SHA-256 of its canonical JSON. */
export function requestHash(request: NormalisedRequest): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical(request)))
    .digest('hex')
    .slice(0, 24);
}

/** The cassette file of a request, relative to the folder. */
export const cassetteName = (operationId: string, hash: string): string => `${operationId}.${hash}.json`;

const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/ogg': 'ogg',
  'video/mp4': 'mp4',
};

const mime = (type: string | undefined): string => (type ?? '').split(';')[0]!.trim().toLowerCase();

/** Whether a body of this type is kept as text in the cassette. */
export const isText = (type: string | undefined): boolean =>
  /^(text\/|application\/(.*\+)?json$|application\/xml$)/.test(mime(type));

/** Whether a body of this type goes to a media file of its own. */
const isMedia = (type: string | undefined): boolean => /^(image|audio|video)\//.test(mime(type));

let temps = 0;

/** Writes a file atomically: a temporary file beside it, then a rename; the temporary file is removed on failure. */
export async function writeAtomic(path: string, data: string | Buffer): Promise<void> {
  const temp = `${path}.${process.pid}.${temps++}.tmp`;
  try {
    await writeFile(temp, data);
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}

/** Where cassettes are written and read. */
export class CassetteStore {
  constructor(readonly dir: string) {}

  /** The body as the cassette stores it; media bytes are written to `media/<sha256>.<ext>` first. */
  async storeBody(body: Buffer, type: string | undefined): Promise<RecordedBody> {
    if (isText(type)) return { text: body.toString('utf8') };
    if (!isMedia(type)) return { base64: body.toString('base64') };
    const file = `media/${createHash('sha256').update(body).digest('hex').slice(0, 32)}.${EXTENSIONS[mime(type)] ?? 'bin'}`;
    await mkdir(join(this.dir, 'media'), { recursive: true });
    await writeAtomic(join(this.dir, file), body);
    return { file };
  }

  /** Writes a cassette (its text already free of secrets); resolves to its file name. */
  async write(operationId: string, hash: string, text: string): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const name = cassetteName(operationId, hash);
    await writeAtomic(join(this.dir, name), text);
    return name;
  }

  /** The cassette of a request, or undefined when there is none. */
  async read(operationId: string, hash: string): Promise<Cassette | undefined> {
    let text: string;
    try {
      text = await readFile(join(this.dir, cassetteName(operationId, hash)), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const cassette = JSON.parse(text) as Cassette;
    const forbidden = forbiddenKeyAt(cassette);
    if (forbidden !== undefined)
      throw new Error(`cassette ${cassetteName(operationId, hash)}: ${forbiddenKeyMessage(forbidden)}`);
    if (cassette.version !== CASSETTE_VERSION)
      throw new Error(
        `cassette ${cassetteName(operationId, hash)} has version ${cassette.version}; this mock reads version ${CASSETTE_VERSION}`,
      );
    return cassette;
  }

  /** The bytes of a recorded body. */
  async bodyBytes(body: RecordedBody): Promise<Buffer> {
    if ('text' in body) return Buffer.from(body.text, 'utf8');
    if ('base64' in body) return Buffer.from(body.base64, 'base64');
    if (!/^media\/[A-Za-z0-9._-]+$/.test(body.file))
      throw new Error(`a cassette names a media file outside its folder: ${body.file}`);
    return readFile(join(this.dir, body.file));
  }
}
