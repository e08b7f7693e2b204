// A raw TCP client for hostile-transport tests: exact bytes, its own pace, and what came back.
import { connect, type Socket } from 'node:net';
import * as assert from 'uvu/assert';
import type { RunningMock } from '../../src/server/server.js';
import { get, KEY } from '../support/index.js';

/** What a raw exchange saw: the bytes received, whether the server closed first, and bytes sent before that. */
export interface Exchange {
  readonly text: string;
  readonly error: string | undefined;
  /** Bytes the client had written when the first response bytes arrived. */
  readonly sentBeforeAnswer: number | undefined;
  readonly sent: number;
}

/** Options of one raw exchange. */
export interface RawOptions {
  /** Bytes written after the head, in `chunk`-sized pieces, as fast as the socket takes them. */
  readonly bodyBytes?: number;
  readonly chunk?: number;
  /** Half-close after writing (the client says it has nothing more to send). */
  readonly end?: boolean;
  /** Written one piece at a time, each after the previous one is flushed and `gapMs` more have passed. */
  readonly trickle?: { readonly pieces: readonly string[]; readonly gapMs: number };
}

/** Sends `head` (and more, per options) on a fresh connection; resolves when the server closes it. */
export function exchange(port: number, head: string | Buffer, opts: RawOptions = {}): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let text = '';
    let error: string | undefined;
    let sent = 0;
    let sentBeforeAnswer: number | undefined;
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (d: Buffer) => {
      sentBeforeAnswer ??= sent;
      text += d.toString('latin1');
    });
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, error, sentBeforeAnswer, sent });
    });
    const write = (data: string | Buffer, then: () => void) => {
      if (socket.destroyed) return;
      sent += Buffer.byteLength(data);
      if (socket.write(data)) then();
      else socket.once('drain', then);
    };
    socket.on('connect', () => {
      write(head, () => {
        if (opts.trickle) {
          const pieces = [...opts.trickle.pieces];
          const next = () => {
            const piece = pieces.shift();
            if (piece !== undefined) write(piece, () => (timer = setTimeout(next, opts.trickle!.gapMs)));
          };
          return next();
        }
        const chunk = Buffer.alloc(opts.chunk ?? 64 * 1024, 'a');
        let left = opts.bodyBytes ?? 0;
        const pump = () => {
          while (left > 0 && !socket.destroyed) {
            const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
            left -= piece.length;
            sent += piece.length;
            if (!socket.write(piece)) return void socket.once('drain', pump);
          }
          if (opts.end) socket.end();
        };
        pump();
      });
    });
  });
}

/** The head of a POST to the chat operation with the default key. */
export const chatHead = (headers: string) =>
  `POST /v1/text-provider/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\n${headers}\r\n`;

/** A small valid chat body. */
export const CHAT_BODY = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });

/** One response read from a raw byte stream: its status and parsed JSON body. */
export interface RawResponse {
  status: number;
  json: { error?: { code: string | null; message: string; param?: string | null } } | undefined;
}

/** The responses in a raw byte stream: status and parsed JSON body of each. */
export function responses(text: string): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = text;
  for (
    let m = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n/.exec(rest);
    m;
    m = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n/.exec(rest)
  ) {
    const length = Number(/content-length: (\d+)/i.exec(m[2]!)?.[1] ?? 0);
    const body = rest.slice(m[0].length, m[0].length + length);
    out.push({ status: Number(m[1]), json: body ? JSON.parse(body) : undefined });
    rest = rest.slice(m[0].length + length);
  }
  return out;
}

/** The server still answers a normal request. */
export async function assertHealthy(mock: RunningMock): Promise<void> {
  const res = await get(mock.url, '/v1/me');
  assert.is(res.status, 200, res.text);
}
