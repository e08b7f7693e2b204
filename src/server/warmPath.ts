import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../app/createApp.js';
import { operation } from '../contract/operations.js';
import { http } from '../lib/cjs.js';
import { PACING_HEADER } from '../text/pacing.js';
import type { WarmStep } from '../text/warmup.js';

/**
 * Steps: about three hundred requests, enough for V8 to compile the request path and the stream writer's
 * per-event path to optimised code (docs/load-testing.md, "Where a first token waits"). Run cold, the first thousand
 * paced streams of a load test cost three to five times the CPU they cost once warm.
 */
const BATCHES = 20;

const CHAT_PATH = `/v1${operation('chat.completions').path}`;
const MODEL = 'gpt-4o-mini';

/** One warm-up request: its body and headers (the path is the chat completions operation's). */
interface WarmRequest {
  readonly body: string;
  readonly headers: Record<string, string>;
}

/**
 * What a batch sends: paced streams (the pacer, the stream writer, the chunk frames), plain chat completions, and the
 * two refusals load tests see most (a 400 and a 401); every one on a connection of its own, as a load tool opens them.
 * Sixteen, sent at once: a batch is what a real request may have to wait behind.
 */
function batch(key: string): WarmRequest[] {
  const chat = (extra: object) =>
    JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Warm up, please.' }], ...extra });
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const stream: WarmRequest = {
    body: chat({ stream: true, max_tokens: 64 }),
    headers: { ...auth, [PACING_HEADER]: 'ttft=1; tps=4000' },
  };
  return [
    ...Array<WarmRequest>(8).fill(stream),
    ...Array<WarmRequest>(4).fill({ body: chat({ max_tokens: 64 }), headers: auth }),
    { body: JSON.stringify({ model: MODEL }), headers: auth },
    { body: chat({}), headers: { ...auth, authorization: 'Bearer sk-not-a-key' } },
    ...Array<WarmRequest>(2).fill({ body: chat({ stream: true, max_tokens: 16 }), headers: auth }),
  ];
}

/** Sends one request and reads its answer to the end; resolves with its status (0 when the connection failed). */
function send(port: number, r: WarmRequest): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: 'POST', path: CHAT_PATH, headers: r.headers, agent: false },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', () => resolve(0));
      },
    );
    req.once('error', () => resolve(0));
    req.end(r.body);
  });
}

/**
 * The steps that run the request path hot before the first load arrives (see runWhileIdle, which runs them only while
 * the server is idle): a private app, built from the defaults with a key of its own and no log, on a loopback port
 * of its own, answers batches of the requests load tests send. Nothing reaches the server's own app: not its
 * journal, log, metrics, keys' usage, rate limits or shared state. The code is what is shared: V8 keeps the
 * optimised code of a function for every app built from it. `close` stops the private server; `statuses` are those
 * of the answers so far, one a request, and `listening` whether the private server is.
 */
export function warmPathSteps(): {
  steps: WarmStep[];
  close: () => Promise<void>;
  statuses: number[];
  listening: () => boolean;
} {
  const statuses: number[] = [];
  let server: Server | undefined;
  let port = 0;
  const key = `sk-warm-${randomBytes(16).toString('hex')}`;
  const open = async () => {
    const mock = createApp({ keys: [{ key, name: 'warm-up', scopes: ['text'] }], state: 'memory' });
    const s = http.createServer(mock.handler);
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen({ port: 0, host: '127.0.0.1' }, resolve);
    });
    s.unref(); // the warm-up never keeps the process alive
    port = (s.address() as AddressInfo).port;
    server = s; // only a listening server is sent batches (a failed listen leaves the steps with nothing to do)
  };
  const run = async () => {
    if (!server) return;
    statuses.push(...(await Promise.all(batch(key).map((r) => send(port, r)))));
  };
  const steps: WarmStep[] = [open, ...Array.from({ length: BATCHES }, () => run)];
  const close = async () => {
    const s = server;
    server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  return { steps, close, statuses, listening: () => server?.listening === true };
}
