// Shared test helpers: a running mock per test, raw HTTP requests, valid bodies, tiny images, media parsers;
// and, from the modules beside this one, captured logs, child environments and waiting on events.
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JournalEntry, RequestRecord } from '../../src/domain/journal/journal.js';
import type { Services } from '../../src/domain/services.js';
import type { Exchange } from '../../src/verdict/types.js';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { createFile, MP4BoxBuffer, type Movie } from 'mp4box';
import { parseBuffer, type IAudioMetadata } from 'music-metadata';
import { PNG } from 'pngjs';
import { createApp, type AppHooks, type MockApp } from '../../src/app/createApp.js';
import type { ConfigInput } from '../../src/domain/config.js';
import { operation } from '../../src/contract/operations.js';
import { schemaId, SchemaRegistry } from '../../src/contract/schemas.js';
import { start, type RunningMock } from '../../src/server/server.js';
import { toDetails } from '../../src/contract/validation.js';

export { builtIsCurrent, childEnv, cli, freePort, type Cli } from './child.js';
export { capture, withLoggedMock, type Captured } from './log.js';
export { median } from '../../bench/report.js';
export { manualTimers, virtualTimers, wireOf, type ManualTimers, type VirtualTimers, type Wire } from './timers.js';
export { tick, waitFor } from './wait.js';

/** The default key of fixtures/keys.json. */
export const KEY = 'sk-mock-default';

/** Starts a mock on a free port, runs fn, and always closes the server. */
export async function withMock<T>(
  config: ConfigInput,
  fn: (mock: RunningMock) => Promise<T>,
  hooks: AppHooks = {},
): Promise<T> {
  const mock = await start({ port: 0, ...config }, hooks);
  try {
    return await fn(mock);
  } finally {
    await mock.close();
  }
}

/** Serves an app built by createApp (with hooks start() does not take, such as stream timers) on a free port; always
 * closes it. */
export async function withApp<T>(
  config: ConfigInput,
  hooks: AppHooks,
  fn: (url: string, app: MockApp, server: Server) => Promise<T>,
): Promise<T> {
  const app = createApp(config, hooks);
  const server = createServer(app.handler).listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    return await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, app, server);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/**
 * One mock for a whole test file (building the app compiles every schema, so tests share it):
 * started before the first test, closed after the last; call the returned function inside a test.
 */
export function useMock(t: Test, config: ConfigInput = {}, hooks: AppHooks = {}): () => RunningMock {
  let mock: RunningMock | undefined;
  t.before(async () => {
    mock = await start({ port: 0, ...config }, hooks);
  });
  t.after(async () => {
    await mock?.close();
  });
  return () => mock!;
}

/** A finished response with everything a test may look at, including the raw header list. */
export interface Res {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  bytes: Buffer;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** Options of one request; a header set to undefined is not sent (to drop a default). */
export interface ReqOptions {
  method?: string;
  /** A value sent as JSON. */
  body?: unknown;
  /** Bytes sent as they are (takes precedence over body). */
  raw?: string | Buffer;
  /** The bearer key; null sends no Authorization header. */
  key?: string | null;
  headers?: Record<string, string | undefined>;
  /** Send the body in chunks without Content-Length. */
  chunked?: boolean;
}

/** One HTTP request over loopback with node:http, so every header (or its absence) is under control. */
export function request(url: string, path: string, opts: ReqOptions = {}): Promise<Res> {
  const payload = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const headers: Record<string, string | undefined> = {
    ...(opts.key === null ? {} : { authorization: `Bearer ${opts.key ?? KEY}` }),
    ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
    ...(payload === undefined || opts.chunked ? {} : { 'content-length': String(Buffer.byteLength(payload)) }),
    ...opts.headers,
  };
  for (const k of Object.keys(headers)) if (headers[k] === undefined) delete headers[k];
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(path, url),
      { method: opts.method ?? (payload === undefined ? 'GET' : 'POST'), headers: headers as Record<string, string> },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const text = bytes.toString('utf8');
          let json: unknown;
          if (String(res.headers['content-type'] ?? '').includes('json')) json = JSON.parse(text);
          resolve({ status: res.statusCode!, headers: res.headers, rawHeaders: res.rawHeaders, bytes, text, json });
        });
      },
    );
    req.on('error', reject);
    if (payload === undefined) req.end();
    else if (opts.chunked) {
      const buf = Buffer.from(payload);
      const half = Math.floor(buf.length / 2);
      req.write(buf.subarray(0, half));
      req.end(buf.subarray(half));
    } else req.end(payload);
  });
}

/** POST a JSON body with a key (the default key unless given). */
export const post = (
  url: string,
  path: string,
  body: unknown,
  key: string | null = KEY,
  headers: Record<string, string | undefined> = {},
): Promise<Res> => request(url, path, { method: 'POST', body, key, headers });

/** GET with a key (the default key unless given). */
export const get = (
  url: string,
  path: string,
  key: string | null = KEY,
  headers: Record<string, string | undefined> = {},
): Promise<Res> => request(url, path, { method: 'GET', key, headers });

/** The path of an operation as the API document writes it. */
export const pathOf = (id: string): string => operation(id).path;

/** A tiny valid PNG made with pngjs (not with the project's own encoder). */
export function tinyPng(width: number, height: number): Buffer {
  const png = new PNG({ width, height });
  png.data.fill(200);
  return PNG.sync.write(png);
}

/** A minimal baseline JPEG header: SOI, a JFIF APP0 segment, an SOF0 frame header with the size, EOI. */
export function tinyJpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([
    0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
  ]);
  const sof = Buffer.from([
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    height >> 8,
    height & 255,
    width >> 8,
    width & 255,
    0x03,
    1,
    0x22,
    0,
    2,
    0x11,
    1,
    3,
    0x11,
    1,
  ]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, Buffer.from([0xff, 0xd9])]);
}

/** A minimal GIF89a: header, logical screen descriptor, trailer. */
export function tinyGif(width: number, height: number): Buffer {
  const b = Buffer.alloc(14);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  b[13] = 0x3b;
  return b;
}

/** A minimal extended WebP (VP8X) header: RIFF, WEBP, the VP8X chunk with width-1 and height-1. */
export function tinyWebp(width: number, height: number): Buffer {
  const b = Buffer.alloc(30);
  b.write('RIFF', 0, 'latin1');
  b.writeUInt32LE(22, 4);
  b.write('WEBPVP8X', 8, 'latin1');
  b.writeUInt32LE(10, 16);
  b.writeUIntLE(width - 1, 24, 3);
  b.writeUIntLE(height - 1, 27, 3);
  return b;
}

/** A valid request body for each documented POST operation. */
export const VALID: Record<string, Record<string, unknown>> = {
  'chat.completions': { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] },
  'images.generate': { model: 'dall-e-3', prompt: 'a lighthouse at dusk' },
  'images.edit': { prompt: 'make the sky purple', image: tinyPng(3, 2).toString('base64') },
  'video.generate': { model: 'gen3a_turbo', mode: 'text_to_video', prompt: 'waves on a beach' },
  'voice.tts': { text: 'Hello world', voice_id: 'rachel' },
  'cloud.speech': { text: 'Hello world', voice: 'en-US-JennyNeural' },
};

let registry: SchemaRegistry | undefined;
/** One schema registry for the tests' own checks. */
export const schemas = (): SchemaRegistry => (registry ??= new SchemaRegistry());

/** Asserts that a value matches the schema of a file in schemas/ (or a full $id). */
export function assertSchema(idOrFile: string, value: unknown): void {
  const id = idOrFile.startsWith('http') ? idOrFile : schemaId(idOrFile);
  const errors = schemas().check(id, value);
  assert.equal(toDetails(errors), [], `${id}: ${JSON.stringify(errors.slice(0, 3))}`);
}

/** Asserts an error response: status, JSON envelope per schemas/error.json, request id, and param when given. */
export function assertError(res: Res, status: number, param?: string | null): void {
  assert.is(res.status, status, `expected ${status}, got ${res.status}: ${res.text.slice(0, 300)}`);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.ok(res.headers['x-request-id'], 'x-request-id missing');
  assertSchema('error.json', res.json);
  if (param !== undefined) assert.is(res.json.error.param, param, res.json.error.message);
}

/** Width and height of a PNG, read by pngjs (a full decode, so the data must be valid too). */
export function pngSize(buf: Buffer): { width: number; height: number } {
  const png = PNG.sync.read(buf);
  return { width: png.width, height: png.height };
}

/** The movie information mp4box reads from an MP4. */
export function mp4Info(buf: Buffer): Movie {
  const file = createFile();
  let info: Movie | undefined;
  let error: string | undefined;
  file.onReady = (i) => (info = i);
  file.onError = (_module: string, message: string) => (error = message);
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length);
  file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(ab, 0));
  file.flush();
  if (!info) throw new Error(`mp4box could not read the file${error ? `: ${error}` : ''}`);
  return info;
}

/** Audio metadata as music-metadata reads it, with the duration computed from the frames. */
export const audioInfo = (buf: Buffer, mimeType: string): Promise<IAudioMetadata> =>
  parseBuffer(buf, { mimeType }, { duration: true });

/** The header block and body of a response as one string, to look for a secret in every byte. */
export const wholeResponse = (res: Res): string => `${res.rawHeaders.join('\n')}\n${res.bytes.toString('latin1')}`;

/** The error a call fails with; the test fails when the call succeeds. */
export async function rejection(p: PromiseLike<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  assert.unreachable('expected the call to fail');
  return undefined;
}

/** A finished request's record as the pipeline reports it, for journal tests: GET /v1/me answered 200, with `over` on
 * top. */
/** The journal's entries of a mock whose state is in memory (its journal answers at once; Redis's would not). */
export function heldEntries(services: Services): JournalEntry[] {
  const entries = services.journal.entries();
  if (entries instanceof Promise) throw new Error('the journal is in shared state: await services.journal.entries()');
  return entries;
}

/**
 * A finished exchange as the verdict checks read it: status 200 and a JSON body (`json`) or a text (`text`, an event
 * stream unless `headers` say otherwise), unless the fields given say otherwise.
 */
export function exchangeOf(e: Partial<Exchange> & { text?: string; json?: unknown } = {}): Exchange {
  const { text, json, ...rest } = e;
  const body = Buffer.from(json !== undefined ? JSON.stringify(json) : (text ?? ''));
  return {
    status: 200,
    headers: { 'content-type': json !== undefined ? 'application/json' : 'text/event-stream' },
    body,
    ms: 50,
    ...rest,
  };
}

export const requestRecord = (over: Partial<RequestRecord> = {}): RequestRecord => ({
  requestId: 'req_1',
  time: 1,
  method: 'GET',
  path: '/v1/me',
  operation: 'me',
  keyLabel: 'sk-m...ault',
  status: 200,
  latencyMs: 1,
  errorCode: undefined,
  details: undefined,
  fault: undefined,
  stream: undefined,
  retryCount: undefined,
  model: undefined,
  ...over,
});

/** A maker of fresh temporary folders named `prefix…`; every folder it made is removed after the file's last test. */
export function tempDirs(t: Test, prefix: string): () => string {
  const made: string[] = [];
  t.after(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}

/** Runs `fn` with a fresh file open for writing (a log's output), then closes and removes it. */
export async function withLogFile(fn: (fd: number, file: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'uam-log-'));
  const file = join(dir, 'out.log');
  const fd = openSync(file, 'w');
  try {
    await fn(fd, file);
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A streamed chat completion held by `stall=2`: once both events are in, the server is shut down with a
 * long grace period. Resolves with how the response ended for the client and what it brought.
 */
export async function stallThenShutdown(
  mock: RunningMock,
  path: string,
  key: string,
  body: unknown,
): Promise<{ how: string; text: string }> {
  let stopped: Promise<void> | undefined;
  const ending = await new Promise<{ how: string; text: string }>((resolve, reject) => {
    const req = httpRequest(
      new URL(path, mock.url),
      {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-mock-fault': 'stall=2' },
      },
      (res) => {
        let out = '';
        res.on('data', (d: Buffer) => {
          out += d.toString();
          // Both events are in: the stream is now held by the stall.
          if (!stopped && out.split('\n\n').length > 2) stopped = mock.shutdown(60_000);
        });
        res.on('end', () => resolve({ how: 'end', text: out }));
        res.on('aborted', () => resolve({ how: 'aborted', text: out }));
        res.on('error', () => resolve({ how: 'error', text: out }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
  await stopped;
  return ending;
}
