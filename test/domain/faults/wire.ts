// Helpers for fault tests: raw exchanges that keep whatever arrived before a connection broke.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { KEY } from '../../support/index.js';

/** What a client saw: the status and bytes if any arrived, and how the exchange ended. */
export interface Exchange {
  status?: number;
  headers?: IncomingHttpHeaders;
  bytes: Buffer;
  text: string;
  /** True when the body arrived whole (Content-Length reached or the last chunk seen). */
  complete: boolean;
  /** The client-side error, when the connection broke. */
  error?: NodeJS.ErrnoException;
}

/**
 * Sends one request and resolves once the exchange is over, however it ends. `onData` sees each
 * body chunk and may return true to hang up at that point (a client giving up on a stall).
 */
export function exchange(
  url: string,
  path: string,
  opts: {
    body?: unknown;
    headers?: Record<string, string>;
    key?: string;
    signal?: AbortSignal;
    onData?: (soFar: string) => boolean;
  } = {},
): Promise<Exchange> {
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = {
    authorization: `Bearer ${opts.key ?? KEY}`,
    ...(payload === undefined
      ? {}
      : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
    ...opts.headers,
  };
  return new Promise((resolve) => {
    const out: Exchange = { bytes: Buffer.alloc(0), text: '', complete: false };
    const chunks: Buffer[] = [];
    const done = () => {
      out.bytes = Buffer.concat(chunks);
      out.text = out.bytes.toString('utf8');
      resolve(out);
    };
    const req = httpRequest(
      new URL(path, url),
      { method: payload === undefined ? 'GET' : 'POST', headers, agent: false, signal: opts.signal },
      (res) => {
        out.status = res.statusCode;
        out.headers = res.headers;
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          if (opts.onData?.(Buffer.concat(chunks).toString('utf8'))) req.destroy();
        });
        res.on('error', (err) => (out.error ??= err));
        res.on('close', () => {
          out.complete = res.complete;
          done();
        });
      },
    );
    req.on('error', (err) => {
      out.error ??= err;
      if (out.status === undefined) done();
    });
    req.end(payload);
  });
}

/** The `data:` payloads of an SSE text, in order. */
export const sseData = (text: string): string[] =>
  text
    .split('\n\n')
    .filter((f) => f.startsWith('data: '))
    .map((f) => f.slice(6));
