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
    };

/** The requests a behaviour sends. */
export const asksOf = (b: Behaviour): readonly Ask[] => (b.kind === 'pipeline-leave' ? b.asks : [b.ask]);

/** The bytes of one request, with its id. */
export function requestBytes(ask: Ask, id: string): string {
  const body = JSON.stringify({
    model: ask.model,
    messages: [{ role: 'user', content: 'hi' }],
    ...(ask.stream ? { stream: true } : {}),
  });
  return (
    'POST /v1/text-provider/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
    `Authorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nX-Request-Id: ${id}\r\n` +
    (ask.pacing === undefined ? '' : `X-Mock-Pacing: ${ask.pacing}\r\n`) +
    (ask.long ? 'X-Mock-Reply-Rule: long\r\n' : '') +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** How a client learns that the server has recorded its requests (the journal): it then has nothing left to wait for. */
export type Recorded = (ids: readonly string[]) => Promise<boolean>;

// The longest a client waits for its answer or its record before it gives up and leaves: a hang becomes a record that
// is missing or wrong, which the battery reports.
const CLIENT_PATIENCE_MS = 20_000;

/** Runs one client to its end; `ids` are its requests' ids, in order. */
export function runClient(port: number, b: Behaviour, ids: readonly string[], recorded: Recorded): Promise<void> {
  return new Promise<void>((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let got = 0;
    let done = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = () => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      socket.destroy();
      resolve();
    };
    const later = (ms: number, fn: () => void) => timers.push(setTimeout(fn, ms));
    socket.on('error', () => {});
    socket.on('close', finish);
    later(CLIENT_PATIENCE_MS, finish);
    // Until the server has recorded every request, looked at every 50 ms: for clients that never see the end.
    const untilRecorded = () => {
      void recorded(ids).then((all) => (all ? finish() : done || later(50, untilRecorded)));
    };
    const text = asksOf(b)
      .map((ask, i) => requestBytes(ask, ids[i]!))
      .join('');
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
      }
    });
  });
}
