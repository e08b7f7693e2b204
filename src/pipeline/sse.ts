import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError, ERRORS } from '../contract/errors.js';
import { frameOf, type Reply, type SseEvents } from '../contract/reply.js';
import type { SentEvent, SentEvents } from '../domain/journal/journal.js';
import type { Limits } from '../domain/limits.js';
import type { StreamStats } from '../domain/lateness.js';
import type { StreamTiming } from '../domain/metrics/metrics.js';
import { sharedFrames } from './frames.js';
import { EARLY_MS, Pacer, realTimers, type Paced, type StreamTimers } from './pacer.js';
import { RequestEnd } from './requestEnd.js';

type SseReply = Extract<Reply, { kind: 'sse' }>;

/** How a stream ended, for the journal. */
export type StreamOutcome = 'completed' | 'aborted' | 'cut' | 'stalled' | 'timed-out';

// Without pacing, events go out in batches; yielding between batches lets other connections run
// and lets each batch leave as its own write, so a client sees the stream arrive incrementally.
const BATCH = 8;
/** A chunk whose JSON is cut off: what `malformed` sends in place of a stream's event. */
export const BROKEN_EVENT = '{"id":"chatcmpl-broken","object":"chat.completion.chunk","choices":[{"delta":{"content":';
const BROKEN_FRAME = frameOf(BROKEN_EVENT);
const DONE_FRAME = frameOf('[DONE]');

/** The bounds a stream's log keeps to: the records fields of fixtures/limits.json, from services.limits. */
export type StreamLogBounds = Pick<Limits['records'], 'maxStreamEvents' | 'maxStreamEventChars'>;

/**
 * The events a stream actually wrote, for the journal (the inspector shows them with their times): the first events
 * within the journal's bounds (records in fixtures/limits.json) and `total`, every event written, so a cut log shows.
 * A stream is held by the journal and, while it runs, for seconds among a thousand others: the log keeps of an event
 * only its time, and makes the texts again from the stream's events when it is read (`events`), as the writer had
 * them (unmasked: the journal masks them). A text that is not one of the stream's events (the broken event, [DONE],
 * the time-limit error) is kept as it is, with its place.
 */
export class StreamLog implements SentEvents {
  /** The times of the events kept, in tenths of a ms from `start`: a Float64Array only for one past 2^32 tenths. */
  private times: Uint32Array | Float64Array = NO_TIMES;
  /** How many events the log keeps; the first of them are the stream's events 0, 1, 2... in order (see `source`). */
  private kept = 0;
  total = 0;
  private chars = 0;
  /** The writer's clock when the stream began (its head was sent just before). */
  start = 0;
  /** The stream's events, which make kept event `k`'s text again (it was event `k`), unless `texts` has its own. */
  private source: SseEvents | undefined = undefined;
  /** Texts kept as they are, each after its place among the kept events: [place, text, place, text...]. */
  private texts: (number | string)[] | undefined = undefined;
  // What the log keeps for the inspector: the first events up to the journal's bounds; `total` counts the rest.
  private readonly maxEvents: number;
  private readonly maxChars: number;

  /**
   * The most any event of the stream was late against its schedule, in µs, -1 before the first: a whole number, which
   * V8 keeps in the object itself (a fractional one would be a box of its own, one more load for every event).
   */
  private worstLateUs = -1;

  /** Told of every event written, with its tokens: /metrics's time to first token and inter-token gaps. */
  timing: StreamTiming | undefined;

  constructor(
    bounds: StreamLogBounds,
    private readonly stats?: StreamStats,
  ) {
    this.maxEvents = bounds.maxStreamEvents;
    this.maxChars = bounds.maxStreamEventChars;
  }

  /** Notes how late an event was written against its schedule (`first`: the first, after the time to first token). */
  late(ms: number, first: boolean): void {
    const late = ms > 0 ? ms : 0;
    const us = Math.round(late * 1000);
    if (us > this.worstLateUs) this.worstLateUs = us < MAX_LATE_US ? us : MAX_LATE_US;
    if (this.stats) (first ? this.stats.firstEvents : this.stats.events).record(late);
  }

  /** Notes event `n` of `events` written at `now` (the writer's clock): its text is made again when the log is read. */
  noteEvent(events: SseEvents, n: number, now: number): void {
    this.total++;
    if (this.kept >= this.maxEvents || this.chars >= this.maxChars) return;
    if (n !== this.kept || (this.source ??= events) !== events) return this.keep(events.data(n), now);
    this.chars += events.chars(n);
    this.time(now);
  }

  /** Notes a text written at `now` that is not one of the stream's events (kept as it is). */
  note(data: string, now: number): void {
    this.total++;
    if (this.kept >= this.maxEvents || this.chars >= this.maxChars) return;
    this.keep(data, now);
  }

  /** The most any event of the stream was late against its schedule, in ms (absent when it kept no time). */
  get worstLateMs(): number | undefined {
    return this.worstLateUs < 0 ? undefined : this.worstLateUs / 1000;
  }

  get events(): SentEvent[] {
    const { times, texts, source } = this;
    const out: SentEvent[] = [];
    for (let k = 0, t = 0; k < this.kept; k++) {
      let data: string;
      if (texts !== undefined && texts[t] === k) {
        data = texts[t + 1] as string;
        t += 2;
      } else data = source!.data(k);
      out.push({ ms: times[k]! / 10, data });
    }
    return out;
  }

  private keep(data: string, now: number): void {
    (this.texts ??= []).push(this.kept, data);
    this.chars += data.length;
    this.time(now);
  }

  private time(now: number): void {
    const k = this.kept++;
    const tenths = Math.round((now - this.start) * 10);
    let times = this.times;
    if (k >= times.length) {
      const grown = new (times.constructor as Uint32ArrayConstructor)(Math.min(Math.max(8, k * 2), this.maxEvents));
      grown.set(times as Uint32Array);
      this.times = times = grown;
    }
    if (tenths > 0xffffffff && times instanceof Uint32Array) this.times = times = Float64Array.from(times);
    times[k] = tenths > 0 ? tenths : 0;
  }
}

const NO_TIMES = new Uint32Array(0);
// The most lateness a stream's log keeps, in µs (about 17 minutes, past any stream time limit): V8's small integers end
// at 2^30 where it compresses pointers.
const MAX_LATE_US = 2 ** 30 - 1;

// The places of SseWriter's times.
const NEXT = 0;
const DEADLINE = 1;

/**
 * How long the last event of a stream at its time limit has to leave before the connection is closed: bytes a client
 * takes leave within a turn; these are held by a full buffer toward the client, or by a response pipelined behind
 * another that has not had its turn.
 */
export const LAST_EVENT_MS = 1000;

/**
 * The last event of a stream that ran past the stream time limit: the error envelope as a data event,
 * which the OpenAI SDKs throw as an APIError and the Vercel AI SDK reports as an error part.
 */
const timeLimitEvent = (streamMaxMs: number): string =>
  new ApiError(ERRORS.STREAM_TIME_LIMIT, {
    message: `The stream ran past the server's stream time limit of ${streamMaxMs} ms (timeouts.streamMaxMs) and was ended; the reply is incomplete.`,
  }).toJson();

/**
 * Writes a streamed reply as server-sent events with its pacing and ending. Resolves when the stream
 * is over; a client that disconnects stops the work at once: no timer or write is left behind.
 * No stream outlasts `streamMaxMs`: every wait (time to first token, pacing, a stall) ends at that
 * deadline, and a stream still running then ends with the time-limit error event instead of [DONE].
 * `log`, when given, notes each event as it is written, with its time and how late it was (see StreamLog).
 * Every wait goes through `timers`; given the server's Pacer, a stream costs no timer of its own. The time to
 * first token runs from `arrived`, when the request arrived on the timers' clock (by default now), as a
 * model's does: the time the request took to read, check and answer is part of it, not added to it. `end` is the
 * request's (what tells the writer that the client is gone, a response pipelined behind another included).
 */
export function writeSse(
  res: ServerResponse,
  reply: SseReply,
  stallMaxMs: number,
  timers: StreamTimers = realTimers,
  streamMaxMs = Number.POSITIVE_INFINITY,
  log?: StreamLog,
  arrived?: number,
  end: RequestEnd = new RequestEnd(res),
): Promise<StreamOutcome> {
  return new Promise((resolve) => startSse(res, reply, stallMaxMs, timers, streamMaxMs, log, arrived, end, resolve));
}

/**
 * writeSse with a callback, `done`, in place of the promise: a stream runs for seconds, and what waits for its end is
 * then that one function, not a promise with its reactions and the suspended frames of the async functions above it.
 */
export function startSse(
  res: ServerResponse,
  reply: SseReply,
  stallMaxMs: number,
  timers: StreamTimers,
  streamMaxMs: number,
  log: StreamLog | undefined,
  arrived: number | undefined,
  end: RequestEnd,
  done: (outcome: StreamOutcome) => void,
): void {
  const pacer = timers instanceof Pacer ? timers : new Pacer(timers);
  new SseWriter(res, reply, stallMaxMs, pacer, streamMaxMs, log, end, done).begin(arrived ?? pacer.now());
}

/** One stream being written: the pacer's job for its next wait (see writeSse). */
class SseWriter implements Paced {
  due = 0;
  slot = -1;
  /** What the pacer runs when the wait is over: the end of a stall or wait for drain; undefined: the next step. */
  private action: (() => void) | undefined = undefined;
  private readonly stop: number;
  private readonly msPerToken: number;
  /** A latency profile's gaps, drawn per event as it is written (in place of msPerToken). */
  private readonly gap: ((tokens: number) => number) | undefined;
  /** The reply's events, schedule and broken event, kept on the writer: what every event reads, from one object. */
  private readonly events: SseEvents;
  private readonly schedule: readonly number[] | undefined;
  private readonly malformedAt: number | undefined;
  /** Whether events have times to keep to, so their lateness means something. */
  private readonly paced: boolean;
  private i = 0;
  private immediate: unknown;
  private settled = false;
  private timedOut = false;
  /**
   * The stream's two times, side by side: when the next event is due (NEXT) and the stream's end at the latest
   * (DEADLINE). A fractional number field is a box of its own in V8's heap, which may lie anywhere; a paced stream reads
   * both for every event, among a thousand other streams' state, and an array's two elements sit side by side.
   *
   * NEXT: waits are measured against this schedule, not chained, so late turns do not add up: over a stream the rate
   * is the configured one whatever the timer granularity. DEADLINE: waits are cut to it rather than timed from it, so
   * the shutdown timers (which end every wait at once) finish a stream instead of timing it out.
   */
  private readonly times = new Float64Array(2);
  /** The next step, for setImmediate (made when an unpaced stream first needs it: a paced one never does). */
  private step: (() => void) | undefined = undefined;
  /** Where the chunk is made: the buffer every writer shares, its chunk written before the next writer's is begun. */
  private readonly frames = sharedFrames;
  /**
   * Whether the last write may have filled a buffer toward the client. A write straight to the socket that it took
   * says it did not (the socket's write returns whether it has room): the next needs no look at both buffers' state.
   */
  private mayBeFull = true;
  /** The socket the last chunk went straight to and left nothing in: the next may go the same way without a look. */
  private direct: Socket | undefined = undefined;
  private readonly onClose = () => this.closed();
  /** What 'drain' calls (made when a client first reads slowly). */
  private onDrain: (() => void) | undefined = undefined;
  /** What the writer waits on for 'drain' (the response, or its socket when written to directly), while it waits. */
  private draining: NodeJS.EventEmitter | undefined;
  /** Whether the response has written once (its head with it): only then may a chunk go straight to the socket. */
  private headWritten = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly reply: SseReply,
    private readonly stallMaxMs: number,
    private readonly pacer: Pacer,
    private readonly streamMaxMs: number,
    private readonly log: StreamLog | undefined,
    private readonly requestEnd: RequestEnd,
    private readonly done: (outcome: StreamOutcome) => void,
  ) {
    const { events, pacing, schedule } = reply;
    this.events = events;
    this.schedule = schedule;
    this.malformedAt = reply.malformedAt;
    this.stop = reply.ending === 'done' ? events.length : Math.min(reply.stopAfter ?? events.length, events.length);
    this.msPerToken = pacing.tokensPerSecond > 0 ? 1000 / pacing.tokensPerSecond : 0;
    this.gap = pacing.gap;
    this.paced = schedule !== undefined || this.gap !== undefined || this.msPerToken > 0;
    const now = pacer.now();
    if (log) log.start = now;
    this.times[DEADLINE] = now + streamMaxMs;
  }

  run(): void {
    const action = this.action;
    if (action === undefined) this.write();
    else action();
  }

  begin(arrived: number): void {
    // A client gone already (before the head, or from behind another pipelined response) gets nothing.
    if (this.requestEnd.closed) return this.closed();
    this.requestEnd.onClose(this.onClose);
    const ttft = this.reply.pacing.timeToFirstTokenMs;
    if (ttft > 0) {
      this.times[NEXT] = arrived + ttft;
      this.action = () => {
        // The first event's lateness is against the request's arrival plus the wait; the schedule after it
        // runs from when it was written, as a client measures it.
        const now = this.pacer.now();
        this.log?.late(now - this.times[NEXT]!, true);
        this.times[NEXT] = now;
        this.action = undefined;
        this.write(true);
      };
      this.later(this.times[NEXT]!);
    } else {
      this.times[NEXT] = this.pacer.now();
      this.write(true);
    }
  }

  // Never past the deadline: no wait is longer than the stream has left.
  private later(at: number): void {
    this.pacer.at(this, Math.min(at, this.times[DEADLINE]!));
  }

  // The pacer runs a job due within EARLY_MS in the turn at hand: a wait cut to the deadline may run that much before
  // it, and must find the deadline reached, or nothing would ever wake the stream again.
  private pastDeadline(now = this.pacer.now()): boolean {
    return now + EARLY_MS >= this.times[DEADLINE]!;
  }

  private finish(outcome: StreamOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.pacer.cancel(this);
    if (this.immediate !== undefined) this.pacer.clearImmediate(this.immediate);
    this.requestEnd.offClose(this.onClose);
    this.unwatchDrain();
    this.done(outcome);
  }

  private closed(): void {
    const { res, reply } = this;
    this.finish(
      this.timedOut
        ? 'timed-out'
        : res.writableFinished
          ? 'completed'
          : reply.ending === 'stall' && this.i >= this.stop
            ? 'stalled'
            : 'aborted',
    );
  }

  // A client that fell behind resumes the rhythm from now rather than receiving a burst.
  private drained(): void {
    this.draining = undefined;
    this.pacer.cancel(this); // the deadline watch of the wait for drain
    this.times[NEXT] = Math.max(this.times[NEXT]!, this.pacer.now());
    this.action = undefined;
    this.write();
  }

  /** Whether the client has not read what was written (the response's buffer or its socket's is full). */
  private needDrain(): boolean {
    return this.res.writableNeedDrain || this.res.socket?.writableNeedDrain === true;
  }

  private unwatchDrain(): void {
    if (this.onDrain) this.draining?.off('drain', this.onDrain);
    this.draining = undefined;
  }

  /**
   * Sends the chunk made (in `frames`) now. Once the response has written its head and nothing waits in its own
   * buffer, the chunk goes straight to the socket, framed as chunked transfer coding frames it (its size in hex,
   * CRLF, the bytes, CRLF): one buffer and one socket write, where the response's write makes four socket writes,
   * corks the socket, uncorks it in one writev and queues a tick. A paced stream writes once an event, so this is
   * the cost every token pays. Otherwise (the first write, which carries the head; HTTP/1.0, which has no chunks; a
   * pipelined response still waiting for its turn) the response writes it, and the socket is uncorked at once:
   * node:http uncorks it on the next tick, and the pacer runs every stream due in a turn before that tick comes,
   * so the first stream's event would wait for the last one's to be written.
   */
  private send(): void {
    const { res, frames } = this;
    // Nothing but this writer writes to the response and its socket while the stream runs: a socket that held nothing
    // after the last chunk still does, and the response has not written since.
    let socket = this.direct;
    if (socket) {
      this.mayBeFull = !socket.write(frames.framed());
      if (!frames.sent(socket)) this.direct = undefined;
      return;
    }
    socket = res.socket ?? undefined;
    if (
      this.headWritten &&
      socket &&
      res.chunkedEncoding &&
      !socket.writableCorked &&
      res.writableLength === socket.writableLength
    ) {
      this.mayBeFull = !socket.write(frames.framed());
      if (frames.sent(socket)) this.direct = socket;
      return;
    }
    this.mayBeFull = true;
    res.write(this.frames.chunk());
    // node:http writes a head set by writeHead with the first write, not before: headersSent is true before that.
    this.headWritten = true;
    if (socket?.writableCorked) socket.uncork();
  }

  /**
   * Adds event `n` (of `tokens` tokens) to the chunk being made; the log notes it (its text only while the log keeps
   * texts).
   */
  private frame(n: number, now: number, tokens: number): void {
    const { events, malformedAt } = this;
    if (n === malformedAt) {
      this.log?.note(BROKEN_EVENT, now);
      this.frames.put(BROKEN_FRAME);
      return;
    }
    const log = this.log;
    if (log) {
      log.noteEvent(events, n, now);
      log.timing?.event(now, tokens);
    }
    events.frame(n, this.frames);
  }

  /**
   * The time limit is reached: the error event ends the stream, or, for a client that has not taken what was sent
   * (its buffer full, or bytes still waiting in the socket for it), the connection. The event has LAST_EVENT_MS to
   * leave; then the connection is closed all the same.
   */
  private timeUp(): void {
    this.timedOut = true;
    const { res } = this;
    if (this.needDrain() || (res.socket?.writableLength ?? 0) > 0) {
      this.finish('timed-out');
      res.destroy();
      return;
    }
    const last = timeLimitEvent(this.streamMaxMs);
    this.log?.note(last, this.pacer.now());
    res.end(`data: ${last}\n\n`); // 'close' reports it
    this.action = () => {
      if (this.pacer.stopping?.aborted) return; // at shutdown, the grace period ends it
      res.destroy();
      this.finish('timed-out');
    };
    this.pacer.at(this, this.pacer.now() + LAST_EVENT_MS);
  }

  /** Ends the stream after the last events made (in `frames`), not yet written. */
  private end(): void {
    const { res, reply, frames } = this;
    if (reply.ending === 'done') {
      this.log?.note('[DONE]', this.pacer.now());
      frames.put(DONE_FRAME);
      res.end(frames.chunk());
      return; // 'close' reports completion once the bytes are flushed
    }
    if (frames.length > 0) res.write(frames.chunk());
    if (reply.ending === 'cut') {
      // No [DONE] and no clean end: the client's reader sees a broken stream. Destroying in the same
      // tick as the writes would drop the corked head and events, so cut once they have left.
      res.write('', () => {
        res.destroy();
        this.finish('cut');
      });
      return;
    }
    this.action = () => {
      const stopping = this.pacer.stopping?.aborted;
      if (!stopping && this.pastDeadline()) return this.timeUp();
      // At the stall maximum the connection drops, as a hung upstream's would. At shutdown the wait ends
      // early and the response ends cleanly (without [DONE]: the stream was never going to complete).
      if (stopping) res.end();
      else res.destroy();
      this.finish('stalled');
    };
    this.later(this.pacer.now() + this.stallMaxMs);
  }

  // Each step writes what is due as one chunk: one event when paced, a batch of events when not.
  private write(first = false): void {
    this.immediate = undefined;
    const { res, stop } = this;
    if (this.settled) return;
    // A chunk that went straight to the socket leaves it to the socket to say whether the client is gone: destroyed or
    // ended, it takes no more writes, and says so at once, where the response hears of it a tick later. Its `writable`
    // reads only the state its write reads anyway: one object less to load for every event.
    const direct = this.direct;
    if (direct ? !direct.writable : this.requestEnd.closed) return this.closed();
    const now = this.pacer.now();
    if (this.pastDeadline(now)) return this.timeUp();
    if (this.mayBeFull && this.needDrain()) {
      // The client reads slowly: hold the rest instead of buffering it. The response tells of 'drain' when its
      // own write found the socket full, the socket when a write straight to it did (see send).
      this.draining = res.writableNeedDrain ? res : res.socket!;
      this.draining.once('drain', (this.onDrain ??= () => this.drained()));
      // ...but not past the deadline. Woken early (at shutdown), the watch does nothing: drain or the grace
      // period ends it.
      if (Number.isFinite(this.times[DEADLINE]!)) {
        this.action = () => {
          if (!this.pastDeadline()) return;
          this.unwatchDrain();
          this.timeUp();
        };
        this.later(this.times[DEADLINE]!);
      }
      return;
    }
    const { events, schedule } = this;
    this.frames.clear();
    for (let written = 0; this.i < stop;) {
      if (this.paced && !first) this.log?.late(now - this.times[NEXT]!, false);
      first = false;
      const n = this.i++;
      const tokens = events.tokens(n);
      this.frame(n, now, tokens);
      this.times[NEXT] += schedule
        ? (schedule[n + 1] ?? schedule[n]!) - schedule[n]!
        : this.gap
          ? this.gap(tokens)
          : tokens * this.msPerToken;
      if (this.times[NEXT]! > now) {
        this.send();
        this.action = undefined;
        this.later(this.times[NEXT]!);
        return;
      }
      if (++written >= BATCH && this.i < stop) {
        this.send();
        this.immediate = this.pacer.setImmediate((this.step ??= () => this.write()));
        return;
      }
    }
    this.end();
  }
}
