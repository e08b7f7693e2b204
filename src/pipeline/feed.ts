import type { Context } from 'koa';
import type { Reply } from '../contract/reply.js';
import { RequestEnd } from './requestEnd.js';

type FeedReply = Extract<Reply, { kind: 'feed' }>;

// What may wait in memory for a slow reader before it is dropped: an EventSource reconnects on its
// own and reads the journal again, so dropping loses nothing, while waiting could grow without limit.
const MAX_BUFFERED_BYTES = 1024 * 1024;

/**
 * Writes a live text/event-stream (the journal feed): open until the client leaves or the server shuts
 * down. Each event is one `event:` and one `data:` line; data is JSON, which holds no raw newline. `end` (the
 * request's) tells when the client is gone.
 */
export function writeFeed(
  ctx: Context,
  reply: FeedReply,
  stopping: AbortSignal | undefined,
  end: RequestEnd = new RequestEnd(ctx.res),
  maxBuffered = MAX_BUFFERED_BYTES,
): Promise<void> {
  const res = ctx.res;
  // The socket is the feed's until the client leaves or the server stops: Koa must not write on it.
  ctx.respond = false;
  ctx.status = 200;
  res.writeHead(200, {
    ...(res.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
  });
  res.write('retry: 2000\n\n');
  return new Promise<void>((resolve) => {
    let done = false;
    const write = (text: string): void => {
      if (done) return;
      if (res.writableLength > maxBuffered) {
        res.destroy();
        finish();
        return;
      }
      res.write(text);
    };
    // Opened first, so that whatever happens next, finish() is what stops it.
    const stop = reply.open((event, data) => write(`event: ${event}\ndata: ${data}\n\n`));
    const beat = setInterval(() => write(': keep-alive\n\n'), reply.heartbeatMs);
    beat.unref();
    function finish(): void {
      if (done) return;
      done = true;
      end.offClose(finish);
      clearInterval(beat);
      stopping?.removeEventListener('abort', close);
      stop();
      resolve();
    }
    function close(): void {
      res.end();
      finish();
    }
    end.onClose(finish);
    stopping?.addEventListener('abort', close, { once: true });
    // A client gone already, or a server stopping already, sends no 'close' or 'abort' any more.
    if (end.closed) finish();
    else if (stopping?.aborted) close();
  });
}
