// Clients that misbehave the way real ones do, each on a raw socket of its own: they pipeline and leave, never read,
// read a byte a second, half-close, or abort at some step of a stream.
import { connect, type Socket } from 'node:net';
import { KEY } from '../support/index.js';

/** One chat request as a client sends it. */
export interface Ask {
  /** `gpt-4o` has a capped profile in the battery's configuration; `gpt-4o-mini` none. */
  readonly model: 'gpt-4o' | 'gpt-4o-mini';
  readonly stream: boolean;
  /** The X-Mock-Pacing header, if any. */
  readonly pacing: string | undefined;
  /** Asks for the built-in long reply (about 1,300 tokens). */
  readonly long: boolean;
}

/** What a client does. */
export type Behaviour =
  /** Several requests pipelined on one connection, then gone: at once, at the first byte back, or after some ms. */
  | {
      readonly kind: 'pipeline-leave';
      readonly asks: readonly Ask[];
      readonly leave: 'at-once' | 'first-byte' | number;
    }
  /** A long stream it never reads a byte of. */
  | { readonly kind: 'never-read'; readonly ask: Ask }
  /** A long stream it reads one byte a second of. */
  | { readonly kind: 'slow-read'; readonly ask: Ask }
  /** Sends its request and half-closes (it will send nothing more), reading the answer. */
  | { readonly kind: 'half-close'; readonly ask: Ask }
  /** Leaves before the answer's head, right after it, or once `bytes` bytes of the body have come (mid-event). */
  | {
      readonly kind: 'abort';
      readonly ask: Ask;
      readonly at: 'before-head' | 'after-head' | 'mid-body';
      readonly bytes: number;
    }
  /**
   * Sends its head and part of its body, then stops (the request time limit answers), sends the rest a byte every
   * 100 ms (the same), half-closes (the body can never end) or resets the connection.
   */
  | { readonly kind: 'slow-upload'; readonly ask: Ask; readonly then: 'stop' | 'drip' | 'half-close' | 'reset' }
  /** Sends `Expect: 100-continue` and its body only once told to; `over` declares a body over the limit instead. */
  | { readonly kind: 'expect'; readonly ask: Ask; readonly over: boolean }
  /** An HTTP/1.0 request: the answer ends when the connection does (no chunked coding). */
  | { readonly kind: 'http10'; readonly ask: Ask }
  /** `count` requests for GET /v1/me pipelined at once, none of their answers read, gone after `leave` ms. */
  | { readonly kind: 'flood'; readonly count: number; readonly leave: number };

/** How many requests a behaviour sends. */
export const requestsOf = (b: Behaviour): number =>
  b.kind === 'pipeline-leave' ? b.asks.length : b.kind === 'flood' ? b.count : 1;

// A body over the chat operation's limit (8 MiB, requests.maxBodyBytes in fixtures/limits.json), as a client declares it.
const OVER_LIMIT_BYTES = 9 * 1024 * 1024;

/** The head and body of one request, with its id; `http` and `extra` head lines as a behaviour asks. */
function requestParts(ask: Ask, id: string, { http = '1.1', extra = '', length = -1 } = {}): [string, string] {
  const body = JSON.stringify({
    model: ask.model,
    messages: [{ role: 'user', content: 'hi' }],
    ...(ask.stream ? { stream: true } : {}),
  });
  return [
    `POST /v1/text-provider/chat/completions HTTP/${http}\r\nHost: 127.0.0.1\r\n` +
      `Authorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nX-Request-Id: ${id}\r\n` +
      (ask.pacing === undefined ? '' : `X-Mock-Pacing: ${ask.pacing}\r\n`) +
      (ask.long ? 'X-Mock-Reply-Rule: long\r\n' : '') +
      extra +
      `Content-Length: ${length >= 0 ? length : Buffer.byteLength(body)}\r\n\r\n`,
    body,
  ];
}

/** The bytes of one request, with its id. */
export const requestBytes = (ask: Ask, id: string): string => requestParts(ask, id).join('');

/** What a client saw: the first bytes the server sent (up to SEEN_BYTES). */
export type Seen = string;
const SEEN_BYTES = 4096;

/** How a client learns that the server has recorded its requests (the journal): it then has nothing left to wait for. */
export type Recorded = (ids: readonly string[]) => Promise<boolean>;

// The longest a client waits for its answer or its record before it gives up and leaves: a hang becomes a record that
// is missing or wrong, which the battery reports.
const CLIENT_PATIENCE_MS = 20_000;

/** Runs one client to its end, with what it saw; `ids` are its requests' ids, in order. */
export function runClient(port: number, b: Behaviour, ids: readonly string[], recorded: Recorded): Promise<Seen> {
  return new Promise<Seen>((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let got = 0;
    let seen = '';
    let done = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = () => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      socket.destroy();
      resolve(seen);
    };
    const see = (d: Buffer) => {
      if (seen.length < SEEN_BYTES) seen += d.toString('latin1', 0, SEEN_BYTES - seen.length);
    };
    const later = (ms: number, fn: () => void) => timers.push(setTimeout(fn, ms));
    socket.on('error', () => {});
    socket.on('close', finish);
    later(CLIENT_PATIENCE_MS, finish);
    // Until the server has recorded every request, looked at every 50 ms: for clients that never see the end.
    const untilRecorded = () => {
      void recorded(ids).then((all) => (all ? finish() : done || later(50, untilRecorded)));
    };
    const text =
      b.kind === 'pipeline-leave'
        ? b.asks.map((ask, i) => requestBytes(ask, ids[i]!)).join('')
        : b.kind === 'flood'
          ? ids
              .map(
                (id) =>
                  `GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${KEY}\r\nX-Request-Id: ${id}\r\n\r\n`,
              )
              .join('')
          : requestBytes(b.ask, ids[0]!);
    socket.on('connect', () => {
      switch (b.kind) {
        case 'pipeline-leave':
          socket.on('data', () => b.leave === 'first-byte' && finish());
          socket.write(text, () => {
            if (b.leave === 'at-once') finish();
            else if (typeof b.leave === 'number') later(b.leave, finish);
          });
          return;
        case 'never-read':
          socket.pause();
          socket.write(text);
          return untilRecorded();
        case 'slow-read': {
          socket.pause();
          socket.write(text);
          const byte = () => {
            socket.read(1);
            if (!done) later(1000, byte);
          };
          byte();
          return untilRecorded();
        }
        case 'half-close':
          socket.on('data', () => {});
          socket.end(text);
          return untilRecorded();
        case 'abort': {
          if (b.at === 'before-head') return void socket.write(text, finish);
          let head = -1;
          socket.on('data', (d: Buffer) => {
            got += d.length;
            if (b.at === 'after-head') return finish();
            head = head >= 0 ? head : d.indexOf('\r\n\r\n') >= 0 ? got - d.length + d.indexOf('\r\n\r\n') + 4 : -1;
            if (head >= 0 && got >= head + b.bytes) finish();
          });
          socket.write(text);
          return untilRecorded();
        }
        case 'slow-upload': {
          socket.on('data', see);
          const [head, body] = requestParts(b.ask, ids[0]!, { length: 4 * 1024 });
          socket.write(head + body.slice(0, 10));
          if (b.then === 'half-close') socket.end();
          else if (b.then === 'reset') later(50, () => (socket.resetAndDestroy(), finish()));
          else if (b.then === 'drip') {
            const drip = () => {
              if (done || !socket.writable) return;
              socket.write('x');
              later(100, drip);
            };
            drip();
          }
          return untilRecorded();
        }
        case 'expect': {
          const extra = 'Expect: 100-continue\r\n';
          const [head, body] = requestParts(b.ask, ids[0]!, { extra, ...(b.over ? { length: OVER_LIMIT_BYTES } : {}) });
          let sent = b.over;
          socket.on('data', (d: Buffer) => {
            see(d);
            if (!sent && seen.startsWith('HTTP/1.1 100 ')) {
              sent = true;
              socket.write(body);
            }
          });
          socket.write(head);
          return untilRecorded();
        }
        case 'http10': {
          socket.on('data', see);
          socket.write(requestParts(b.ask, ids[0]!, { http: '1.0' }).join(''));
          return; // its answer ends when the server closes the connection
        }
        case 'flood':
          socket.pause();
          socket.write(text);
          later(b.leave, finish);
          return;
      }
    });
  });
}
