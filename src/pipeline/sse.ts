import type { ServerResponse } from 'node:http';
import { ApiError, ERRORS } from '../contract/errors.js';
import type { Reply } from '../contract/reply.js';
import type { SentEvent, SentEvents } from '../domain/journal.js';
import type { Limits } from '../domain/limits.js';

type SseReply = Extract<Reply, { kind: 'sse' }>;

/** How a stream ended, for the journal. */
export type StreamOutcome = 'completed' | 'aborted' | 'cut' | 'stalled' | 'timed-out';

/** The time functions the writer uses; tests pass their own to check pacing and clean-up without waiting. */
export interface StreamTimers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Yields between unpaced batches; the global setImmediate when absent. */
  setImmediate?(fn: () => void): unknown;
  clearImmediate?(handle: unknown): void;
  /** Aborted when the server shuts down: a stall then ends the response cleanly instead of dropping it. */
  readonly stopping?: AbortSignal;
}

/** The process's own clock and timers: what a stream waits with when no server gives it its own. */
export const realTimers: StreamTimers = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
const yieldNow = (fn: () => void): unknown => setImmediate(fn);
const cancelYield = (handle: unknown): void => clearImmediate(handle as NodeJS.Immediate);

// Without pacing, events go out in batches; yielding between batches lets other connections run
// and lets each batch leave as its own write, so a client sees the stream arrive incrementally.
const BATCH = 8;
/** A chunk whose JSON is cut off: what `malformed` sends in place of a stream's event. */
export const BROKEN_EVENT = '{"id":"chatcmpl-broken","object":"chat.completion.chunk","choices":[{"delta":{"content":';

/** The bounds a stream's log keeps to: the records fields of fixtures/limits.json, from services.limits. */
export type StreamLogBounds = Pick<Limits['records'], 'maxStreamEvents' | 'maxStreamEventChars'>;

/**
 * The events a stream actually wrote, for the journal (the inspector shows them with their timing): the
 * first events within the journal's bounds (records in fixtures/limits.json), as the writer had them (references,
 * unmasked: the journal
 * masks them), and `total`, every event written, so a cut log shows.
 */
export class StreamLog implements SentEvents {
  // Two arrays rather than an object per event: a stream of a few hundred events is held by the journal.
  private readonly texts: string[] = [];
  private readonly times: number[] = [];
  total = 0;
  private chars = 0;
  /** The writer's clock when the stream began (its head was sent just before). */
  start = 0;
  // What the log keeps for the inspector: the first events up to the journal's bounds; `total` counts the rest.
  private readonly maxEvents: number;
  private readonly maxChars: number;

  constructor(bounds: StreamLogBounds) {
    this.maxEvents = bounds.maxStreamEvents;
    this.maxChars = bounds.maxStreamEventChars;
  }

  /** Notes one event written at `now` (the writer's clock). */
  note(data: string, now: number): void {
    this.total++;
    if (this.texts.length >= this.maxEvents || this.chars >= this.maxChars) return;
    this.chars += data.length;
    this.texts.push(data);
    this.times.push(Math.round((now - this.start) * 10) / 10);
  }

  get events(): SentEvent[] {
    return this.texts.map((data, i) => ({ ms: this.times[i]!, data }));
  }
}

/**
 * The last event of a stream that ran past the stream time limit: the error envelope as a data event,
 * which the OpenAI SDKs throw as an APIError and the Vercel AI SDK reports as an error part.
 */
export const timeLimitEvent = (streamMaxMs: number): string =>
  new ApiError(ERRORS.STREAM_TIME_LIMIT, {
    message: `The stream ran past the server's stream time limit of ${streamMaxMs} ms (timeouts.streamMaxMs) and was ended; the reply is incomplete.`,
  }).toJson();

/**
 * Writes a streamed reply as server-sent events with its pacing and ending. Resolves when the stream
 * is over; a client that disconnects stops the work at once: no timer or write is left behind.
 * No stream outlasts `streamMaxMs`: every wait (time to first token, pacing, a stall) ends at that
 * deadline, and a stream still running then ends with the time-limit error event instead of [DONE].
 * `log`, when given, notes each event as it is written, with its time (see StreamLog).
 */
export function writeSse(
  res: ServerResponse,
  reply: SseReply,
  stallMaxMs: number,
  timers: StreamTimers = realTimers,
  streamMaxMs = Number.POSITIVE_INFINITY,
  log?: StreamLog,
): Promise<StreamOutcome> {
  const { events, pacing, schedule } = reply;
  const stop = reply.ending === 'done' ? events.length : Math.min(reply.stopAfter ?? events.length, events.length);
  const msPerToken = pacing.tokensPerSecond > 0 ? 1000 / pacing.tokensPerSecond : 0;
  if (log) log.start = timers.now();
  return new Promise((resolve) => {
    let i = 0;
    let timer: unknown;
    let immediate: unknown;
    let settled = false;
    // When the next event is due. Waits are measured against this schedule, not chained, so late timers
    // do not add up: over a stream the rate is the configured one whatever the timer granularity.
    let due = 0;
    // The stream's end at the latest. Waits are cut to it rather than timed from it, so the shutdown
    // timers (which end every wait at once) finish a stream instead of timing it out.
    const deadline = timers.now() + streamMaxMs;
    let timedOut = false;
    const finish = (outcome: StreamOutcome) => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      if (immediate !== undefined) (timers.clearImmediate ?? cancelYield)(immediate);
      res.off('close', onClose);
      res.off('drain', onDrain);
      resolve(outcome);
    };
    const onClose = () =>
      finish(
        res.writableFinished
          ? timedOut
            ? 'timed-out'
            : 'completed'
          : reply.ending === 'stall' && i >= stop
            ? 'stalled'
            : 'aborted',
      );
    // A client that fell behind resumes the rhythm from now rather than receiving a burst.
    const onDrain = () => {
      if (timer !== undefined) timers.clearTimeout(timer); // the deadline watch of the wait for drain
      timer = undefined;
      due = Math.max(due, timers.now());
      step();
    };
    res.on('close', onClose);

    const frame = (n: number) => {
      const data = n === reply.malformedAt ? BROKEN_EVENT : events[n]!.data;
      log?.note(data, timers.now());
      return `data: ${data}\n\n`;
    };
    // Never past the deadline: no wait is longer than the stream has left, so no timer can overflow
    // (Node's cap is 2^31 - 1 ms) whatever the pacing.
    const later = (fn: () => void, ms: number) => {
      timer = timers.setTimeout(
        () => {
          timer = undefined;
          fn();
        },
        Math.min(ms, Math.max(0, deadline - timers.now())),
      );
    };
    const pastDeadline = () => timers.now() >= deadline;

    /** The time limit is reached: the error event ends the stream, or, for a client that reads nothing, the connection.
     * */
    function timeUp() {
      timedOut = true;
      if (res.writableNeedDrain) {
        finish('timed-out');
        res.destroy();
        return;
      }
      const last = timeLimitEvent(streamMaxMs);
      log?.note(last, timers.now());
      res.end(`data: ${last}\n\n`); // 'close' reports it
    }
    function drainTimeUp() {
      if (!pastDeadline()) return;
      res.off('drain', onDrain);
      timeUp();
    }

    /** Ends the stream after `out`, the last events not yet written. */
    function end(out: string) {
      if (reply.ending === 'done') {
        log?.note('[DONE]', timers.now());
        res.end(`${out}data: [DONE]\n\n`);
        return; // 'close' reports completion once the bytes are flushed
      }
      if (out) res.write(out);
      if (reply.ending === 'cut') {
        // No [DONE] and no clean end: the client's reader sees a broken stream. Destroying in the same
        // tick as the writes would drop the corked head and events, so cut once they have left.
        res.write('', () => {
          res.destroy();
          finish('cut');
        });
        return;
      }
      later(() => {
        if (!timers.stopping?.aborted && pastDeadline()) return timeUp();
        // At the stall maximum the connection drops, as a hung upstream's would. At shutdown the wait ends
        // early and the response ends cleanly (without [DONE]: the stream was never going to complete).
        if (timers.stopping?.aborted) res.end();
        else res.destroy();
        finish('stalled');
      }, stallMaxMs);
    }

    // Each step writes what is due as one chunk: one event when paced, a batch of events when not.
    function step() {
      immediate = undefined;
      if (settled || res.destroyed) return;
      if (pastDeadline()) return timeUp();
      if (res.writableNeedDrain) {
        res.once('drain', onDrain); // the client reads slowly: hold the rest instead of buffering it
        // ...but not past the deadline. Woken early (at shutdown), the watch does nothing: drain or the grace period
        // ends it.
        if (Number.isFinite(deadline)) later(drainTimeUp, deadline - timers.now());
        return;
      }
      let out = '';
      for (let written = 0; i < stop;) {
        out += frame(i);
        i++;
        due += schedule ? (schedule[i] ?? schedule[i - 1]!) - schedule[i - 1]! : events[i - 1]!.tokens * msPerToken;
        const wait = due - timers.now();
        if (wait > 0) {
          res.write(out);
          later(step, wait);
          return;
        }
        if (++written >= BATCH && i < stop) {
          res.write(out);
          immediate = (timers.setImmediate ?? yieldNow)(step);
          return;
        }
      }
      end(out);
    }

    const begin = () => {
      due = timers.now();
      step();
    };
    if (pacing.timeToFirstTokenMs > 0) later(begin, pacing.timeToFirstTokenMs);
    else begin();
  });
}
