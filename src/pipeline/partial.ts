import type { Context } from 'koa';
import type { StreamOutcome } from './sse.js';
import type { Reply } from '../contract/reply.js';

type Whole = Extract<Reply, { kind: 'json' | 'binary' }>;

/**
 * Writes the first `bytes` bytes of a non-streamed reply under a Content-Length for the whole body,
 * then cuts the connection, or (`stall`) holds it silent until the client leaves or `stallMaxMs` passes.
 * Resolves with how it ended, for the journal.
 */
export function writePartial(
  ctx: Context,
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
  if (how === 'cut') {
    // Destroying in the same tick would drop the corked head and bytes: cut once they have left.
    return new Promise((resolve) => {
      res.write(sent, () => {
        res.destroy();
        resolve('cut');
      });
    });
  }
  res.write(sent);
  return new Promise((resolve) => {
    const timer = setTimeout(() => res.destroy(), stallMaxMs);
    res.once('close', () => {
      clearTimeout(timer);
      resolve('stalled');
    });
  });
}
