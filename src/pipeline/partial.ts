import type { Context } from 'koa';
import type { StreamOutcome } from './sse.js';
import type { Reply } from '../contract/reply.js';
import type { RequestEnd } from './requestEnd.js';

type Whole = Extract<Reply, { kind: 'json' | 'binary' }>;

/**
 * Writes the first `bytes` bytes of a non-streamed reply under a Content-Length for the whole body,
 * then cuts the connection, or (`stall`) holds it silent until the client leaves or `stallMaxMs` passes.
 * Resolves with how it ended, for the journal (`aborted` when the client left first, which `end` tells).
 */
export function writePartial(
  ctx: Context,
  end: RequestEnd,
  reply: Whole,
  bytes: number,
  how: 'cut' | 'stall',
  stallMaxMs: number,
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
  const sent = body.subarray(0, Math.max(0, Math.min(bytes, body.length - 1))); // never the whole body: the client must see it end early
  if (end.closed) return Promise.resolve('aborted');
  if (how === 'cut') {
    // Destroying in the same tick would drop the corked head and bytes: cut once they have left. A response
    // pipelined behind another writes nothing until its turn: its client leaving first ends it.
    return new Promise((resolve) => {
      const gone = () => resolve('aborted');
      end.onClose(gone);
      res.write(sent, () => {
        end.offClose(gone);
        res.destroy();
        resolve('cut');
      });
    });
  }
  res.write(sent);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      end.offClose(done);
      resolve('stalled');
    };
    // Ended here, not by the 'close' the destroy brings: a response still queued behind another is told nothing.
    const timer = setTimeout(() => {
      res.destroy();
      done();
    }, stallMaxMs);
    end.onClose(done);
  });
}
