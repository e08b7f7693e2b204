import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import { writeFeed } from './feed.js';
import { startSse, StreamLog, type StreamLogBounds } from './sse.js';
import { realTimers, type StreamTimers } from './pacer.js';
import { endOf } from './requestEnd.js';
import type { RequestState } from './steps.js';
import { addHeader, openHead, takeHead } from './requestContext.js';
import type { Limits } from '../domain/limits.js';
import type { StreamStats } from '../domain/lateness.js';
import type { Metrics } from '../domain/metrics/metrics.js';

/** The records bounds of fixtures/limits.json (services.limits) the writer keeps to for the journal. */
type ResponderBounds = StreamLogBounds & Pick<Limits['records'], 'maxResponseBodyChars'>;

/** The Content-Type of every JSON answer. */
export const JSON_TYPE = 'application/json; charset=utf-8';
const SSE_TYPE = 'text/event-stream; charset=utf-8';

/**
 * Ends the response with a JSON text: status, type and length set once, then one write. `head`, the
 * headers kept with the request (requestContext.ts takeHead), goes out with them in one writeHead. A
 * response whose client is gone is ended without a body, as Koa would end it.
 */
export function writeJson(res: ServerResponse, status: number, text: string, head?: string[]): void {
  res.statusCode = status;
  if (res.writableEnded) return;
  const gone = res.socket && !res.socket.writable;
  if (!gone) {
    const length = Buffer.byteLength(text);
    if (head) head.push('Content-Type', JSON_TYPE, 'Content-Length', String(length));
    else {
      res.setHeader('Content-Type', JSON_TYPE);
      res.setHeader('Content-Length', length);
    }
  }
  if (head) res.writeHead(status, head);
  if (gone) res.end();
  else res.end(text);
}

/** What `respond` returns for a stream it was given `ended` for: the writer calls `ended` when the stream is over. */
export const STREAMING = Symbol('streaming');

/**
 * Writes the reply the steps left in state.reply. Returns once it is written, or a promise of it; a stream started
 * with `ended` returns STREAMING and calls `ended` when it is over (else it returns the promise of its end).
 */
export type Respond = (
  ctx: Context,
  state: RequestState,
  ended?: (ctx: Context, state: RequestState) => void,
) => void | Promise<void> | typeof STREAMING;

/**
 * Writes the reply the steps left in state.reply: JSON in one go (Koa's body setter would guess the type and measure it
 * again), streams directly, binary bodies through Koa (ctx.body: the one answer Koa writes, serve.ts).
 */
export function responder(
  records: ResponderBounds,
  stallMaxMs: number,
  timers?: StreamTimers,
  streamMaxMs?: number,
  stats?: StreamStats,
  metrics?: Pick<Metrics, 'stream'>,
): Respond {
  // The journal keeps a text answer whole up to this many characters: such an answer with a recipe is
  // journalled as its recipe (longer ones are held as they are, by the journal and the body store).
  const journalTextChars = records.maxResponseBodyChars;
  return function respond(ctx, state, ended) {
    const reply = state.reply;
    if (!reply) return;
    const res = ctx.res;
    const extra = reply.headers;
    if (extra) for (const name in extra) addHeader(res, state, name, extra[name]!);
    // A JSON answer and a stream write the request's headers themselves; the others hand them to the response first.
    if (reply.kind !== 'json' && reply.kind !== 'sse') openHead(res, state);
    switch (reply.kind) {
      case 'json': {
        const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
        // The journal keeps this text, bounded, when the entry is made; a short one with a recipe as the recipe.
        state.responseBody = reply.recipe && text.length <= journalTextChars ? reply.recipe : text;
        writeJson(res, reply.status ?? state.operation?.success.status ?? 200, text, takeHead(state));
        return;
      }
      case 'binary':
        ctx.status = reply.status ?? 200;
        ctx.type = reply.contentType;
        ctx.body = reply.body;
        state.responseBody = reply.body;
        return;
      case 'sse':
        return stream(ctx, state, ended, records, stallMaxMs, timers, streamMaxMs, stats, metrics);
      case 'feed':
        return writeFeed(ctx, reply, timers?.stopping, endOf(state, res));
    }
  };
}

/** Starts the stream; with `ended`, returns STREAMING and calls it when the stream is over, else the promise of that. */
function stream(
  ctx: Context,
  state: RequestState,
  ended: ((ctx: Context, state: RequestState) => void) | undefined,
  records: StreamLogBounds,
  stallMaxMs: number,
  timers: StreamTimers | undefined,
  streamMaxMs: number | undefined,
  stats: StreamStats | undefined,
  metrics: Pick<Metrics, 'stream'> | undefined,
): Promise<void> | typeof STREAMING {
  const reply = state.reply as Extract<RequestState['reply'], { kind: 'sse' }>;
  // The socket is the stream writer's from here until the stream ends: Koa must not write on it, whatever is on ctx.body.
  ctx.respond = false;
  ctx.status = 200;
  // The request's headers and the stream's own in one writeHead, as a JSON answer's (requestContext.ts takeHead): no
  // header set one by one and read back as a copy. Any a step already set on the response go out before them.
  addHeader(ctx.res, state, 'content-type', SSE_TYPE);
  addHeader(ctx.res, state, 'cache-control', 'no-cache');
  const head = takeHead(state);
  if (head) ctx.res.writeHead(200, head);
  else ctx.res.writeHead(200);
  // Send the head now: otherwise it waits for the first event, and a long time to first token
  // would look like a server that does not answer at all.
  ctx.res.flushHeaders();
  const log = (state.sse = new StreamLog(records, stats));
  // The model is known here, once per stream: the writer's sink for /metrics takes no label lookup per token. Its time
  // to first token counts a wait for one of the model's slots, as vLLM's does (the stream's own runs from the slot).
  const arrived = state.arrived ?? timers?.now() ?? performance.now();
  if (metrics) log.timing = metrics.stream(state.plan?.model?.id, arrived - (state.queuedMs ?? 0));
  const end = endOf(state, ctx.res);
  // Open until the request's end (endRequest), however the stream ends.
  if (stats) end.countStream(stats);
  // What the stream's record needs of the request is its raw text, not the parsed body (the plan names the model):
  // the body is let go for the seconds the stream runs.
  state.body = undefined;
  const timing = timers ?? realTimers;
  const maxMs = streamMaxMs ?? Infinity;
  const start = (then: () => void) =>
    startSse(ctx.res, reply, stallMaxMs, timing, maxMs, log, state.arrived, end, (outcome) => {
      state.stream = outcome;
      then();
    });
  if (!ended) return new Promise<void>(start);
  // What waits for the stream's end is this one function: nothing else of the request's path stays suspended.
  start(() => ended(ctx, state));
  return STREAMING;
}
