// What a fault does to the connection itself: no answer at all, or an answer that ends early (cut, or held
// silent). The mock's faulted bodies and the relay's faulted streams end through the one writer here.
import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { Reply } from '../contract/reply.js';
import type { StreamTimers } from './pacer.js';
import type { RequestEnd } from './requestEnd.js';
import type { StreamOutcome } from './sse.js';
import type { RequestState } from './steps.js';

type Whole = Extract<Reply, { kind: 'json' | 'binary' }>;

/** Ends the exchange with no response at all: a TCP reset, or a clean close. */
export function dropConnection(ctx: Context, state: RequestState, how: 'reset' | 'empty'): void {
  ctx.respond = false; // Koa must not write anything on this socket
  state.transportStatus = 0;
  const socket = ctx.req.socket;
  if (how === 'reset' && typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

/**
 * Ends an answer early, after `rest` (what it still has to send): cut once the bytes have left, or held silent
 * until the client leaves or `stallMaxMs` passes, then cut. At shutdown (the timers' `stopping`) a stall ends at
 * once: a stream cleanly, as the mock's own streams do; a body with a declared length is cut, since ending it
 * short would tell the client it had all of it. Resolves with how it ended (`aborted`: the client left first).
 */
export function endEarly(
  out: ServerResponse,
  end: RequestEnd,
  rest: string | Buffer,
  how: 'cut' | 'stall',
  stallMaxMs: number,
  timers: StreamTimers,
): Promise<'cut' | 'stalled' | 'aborted'> {
  if (end.closed) return Promise.resolve('aborted');
  if (how === 'cut') return cutAfter(out, end, rest);
  // The head goes out with the bytes, or alone when there are none.
  if (rest.length || !out.headersSent) out.write(rest);
  return new Promise((resolve) => {
    const done = () => {
      timers.clearTimeout(timer);
      end.offClose(done);
      resolve('stalled');
    };
    // Ended here, not by the 'close' it brings: a response still queued behind another is told nothing.
    const timer = timers.setTimeout(() => {
      if (timers.stopping?.aborted && !out.hasHeader('content-length')) out.end();
      else out.destroy();
      done();
    }, stallMaxMs);
    end.onClose(done);
  });
}

/**
 * Writes `rest`, then cuts the connection. Destroying in the same tick as the writes would drop them: cut once
 * they have left. A response pipelined behind another writes nothing until its turn: its client leaving first
 * ends it.
 */
function cutAfter(out: ServerResponse, end: RequestEnd, rest: string | Buffer): Promise<'cut' | 'aborted'> {
  return new Promise((resolve) => {
    const gone = () => resolve('aborted');
    end.onClose(gone);
    out.write(rest, () => {
      end.offClose(gone);
      out.destroy();
      resolve('cut');
    });
  });
}

/**
 * Writes the first `bytes` bytes of a non-streamed reply under a Content-Length for the whole body, then ends
 * it early (`endEarly`). Resolves with how it ended, for the journal.
 */
export function writePartial(
  ctx: Context,
  end: RequestEnd,
  reply: Whole,
  bytes: number,
  how: 'cut' | 'stall',
  stallMaxMs: number,
  timers: StreamTimers,
): Promise<StreamOutcome> {
  const body =
    reply.kind === 'json'
      ? Buffer.from(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body))
      : reply.body;
  const contentType = reply.kind === 'json' ? 'application/json; charset=utf-8' : reply.contentType;
  const res = ctx.res;
  ctx.respond = false;
  res.writeHead(reply.status ?? 200, {
    ...(ctx.response.headers as Record<string, string>),
    ...reply.headers,
    'content-type': contentType,
    'content-length': String(body.length),
  });
  // Never the whole body: the client must see it end early.
  const sent = body.subarray(0, Math.max(0, Math.min(bytes, body.length - 1)));
  return endEarly(res, end, sent, how, stallMaxMs, timers);
}
