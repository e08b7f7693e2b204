import type { ServerResponse } from 'node:http';
import type { Reply } from './types.js';

type SseReply = Extract<Reply, { kind: 'sse' }>;

/** How a stream ended, for the journal. */
export type StreamOutcome = 'completed' | 'aborted' | 'cut' | 'stalled';

// Without pacing, events go out in batches; yielding between batches lets other connections run
// and lets each batch leave as its own write, so a client sees the stream arrive incrementally.
const BATCH = 8;
const BROKEN_EVENT = '{"id":"chatcmpl-broken","object":"chat.completion.chunk","choices":[{"delta":{"content":';

/**
 * Writes a streamed reply as server-sent events with its pacing and ending. Resolves when the stream
 * is over; a client that disconnects stops the work at once: no timer or write is left behind.
 */
export function writeSse(res: ServerResponse, reply: SseReply, stallMaxMs: number): Promise<StreamOutcome> {
  const { events, pacing } = reply;
  const stop = reply.ending === 'done' ? events.length : Math.min(reply.stopAfter ?? events.length, events.length);
  return new Promise((resolve) => {
    let i = 0;
    let timer: NodeJS.Timeout | undefined;
    let immediate: NodeJS.Immediate | undefined;
    let settled = false;
    const finish = (outcome: StreamOutcome) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      if (immediate) clearImmediate(immediate);
      res.off('close', onClose);
      res.off('drain', step);
      resolve(outcome);
    };
    const onClose = () => finish(res.writableFinished ? 'completed' : reply.ending === 'stall' && i >= stop ? 'stalled' : 'aborted');
    res.on('close', onClose);

    const frame = (n: number) => `data: ${n === reply.malformedAt ? BROKEN_EVENT : events[n]!.data}\n\n`;
    const delayAfter = (n: number) => (pacing.tokensPerSecond > 0 ? (events[n]!.tokens / pacing.tokensPerSecond) * 1000 : 0);

    function end() {
      if (reply.ending === 'done') {
        res.end('data: [DONE]\n\n');
        return; // 'close' reports completion once the bytes are flushed
      }
      if (reply.ending === 'cut') {
        res.destroy(); // no [DONE] and no clean end: the client's reader sees a broken stream
        finish('cut');
        return;
      }
      timer = setTimeout(() => {
        res.destroy();
        finish('stalled');
      }, stallMaxMs);
    }

    function step() {
      timer = undefined;
      immediate = undefined;
      if (settled || res.destroyed) return;
      for (let written = 0; i < stop; ) {
        const ok = res.write(frame(i));
        const wait = delayAfter(i++);
        if (wait > 0) {
          timer = setTimeout(step, wait);
          return;
        }
        if (!ok) {
          res.once('drain', step); // the client reads slowly: hold the rest instead of buffering it
          return;
        }
        if (++written >= BATCH && i < stop) {
          immediate = setImmediate(step);
          return;
        }
      }
      end();
    }

    if (pacing.timeToFirstTokenMs > 0) timer = setTimeout(step, pacing.timeToFirstTokenMs);
    else step();
  });
}
