import { MAX_TIMER_MS } from '../lib/timers.js';

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

/** Something the pacer runs at a time: a stream's next event, a wait of the stream writer or the relay. */
export interface Paced {
  /** When it is due, on the pacer's clock (set by `Pacer.at`). */
  due: number;
  /** Its place in the pacer's queue, -1 when not queued: the pacer's own. */
  slot: number;
  run(): void;
}

/** A wait set through the StreamTimers face of the pacer. */
class Wait implements Paced {
  due = 0;
  slot = -1;
  constructor(readonly run: () => void) {}
}

/**
 * How early a job may run: timers fire on a millisecond clock, and one armed for the part of a millisecond
 * left would fire up to a millisecond late. A job due within this margin runs in the current turn instead.
 */
export const EARLY_MS = 1;

/**
 * One scheduler for every stream of a server: jobs due at absolute times in one queue (a binary heap),
 * served by one timer armed for the earliest. Each turn runs every job that was due when it began, in the
 * order of their times, so a thousand paced streams cost one timer and no allocation per event, and a
 * stream's events keep to their schedule whatever the others do.
 *
 * A turn is not cut short to let the event loop read its sockets sooner: the streams already open are owed
 * their events now, and a turn that writes part of them and yields hands a saturated core to new requests
 * while the rest fall further behind (docs/performance.md, "Paced streams at scale"). A turn's length is
 * bounded by what was due when it began; what falls due while it runs waits for the next turn, after the
 * sockets have been read (docs/load-testing.md, "Where a first token waits").
 *
 * It is also the server's StreamTimers: the other waits (a stall, the stream time limit, the relay's) go
 * through the same queue. When `stopping` is aborted (the server shuts down), every job runs at once and
 * jobs queued from then on do not wait, so open streams end within the shutdown grace period.
 */
export class Pacer implements StreamTimers {
  private readonly queue: Paced[] = [];
  /**
   * Each queued job's time and order (among jobs due at the same time: first queued, first run), by its place in the
   * queue: the heap compares these, side by side in memory, rather than loading them from a thousand jobs (stream
   * writers) spread over the heap.
   */
  private dues = new Float64Array(64);
  private orderOf = new Float64Array(64);
  private orders = 0;
  private armed: unknown;
  private armedFor = Number.POSITIVE_INFINITY;
  private immediate: unknown;
  /**
   * The job being run, left at the top of the queue while it runs: a job that queues itself again (a stream's next
   * event) then takes one step down the heap instead of a removal and an insertion.
   */
  private running: Paced | undefined = undefined;
  readonly stopping?: AbortSignal;
  private readonly turn = () => this.runDue();

  constructor(
    private readonly base: StreamTimers,
    stopping: AbortSignal | undefined = base.stopping,
  ) {
    if (stopping) {
      this.stopping = stopping;
      stopping.addEventListener('abort', () => this.arm(), { once: true });
    }
  }

  /** The pacer's clock, in ms. */
  now(): number {
    return this.base.now();
  }

  /** How many jobs are queued. */
  get size(): number {
    return this.queue.length;
  }

  /** Queues `job` to run at `due` (the pacer's clock); a job already queued moves to its new time. */
  at(job: Paced, due: number): void {
    const order = ++this.orders;
    job.due = due;
    if (job === this.running) {
      this.running = undefined;
      if (job.slot === 0) {
        this.down(0, job, due, order);
        return; // the turn arms the timer when it ends
      }
    }
    if (job.slot >= 0) this.remove(job);
    const at = this.queue.length;
    this.queue.push(job);
    if (at >= this.dues.length) this.grow();
    this.up(at, job, due, order);
    if (job.slot === 0) this.arm();
  }

  /** Takes `job` out of the queue; nothing when it is not queued. With nothing left queued, no timer is left armed. */
  cancel(job: Paced): void {
    if (job === this.running) this.running = undefined;
    if (job.slot < 0) return;
    this.remove(job);
    if (this.queue.length === 0 && this.armed !== undefined) {
      this.base.clearTimeout(this.armed);
      this.armed = undefined;
      this.armedFor = Number.POSITIVE_INFINITY;
    }
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const wait = new Wait(fn);
    this.at(wait, this.base.now() + ms);
    return wait;
  }

  clearTimeout(handle: unknown): void {
    if (handle instanceof Wait) this.cancel(handle);
  }

  setImmediate(fn: () => void): unknown {
    return this.base.setImmediate ? this.base.setImmediate(fn) : setImmediate(fn);
  }

  clearImmediate(handle: unknown): void {
    if (this.base.clearImmediate) this.base.clearImmediate(handle);
    else clearImmediate(handle as NodeJS.Immediate);
  }

  /** Runs the jobs due when the turn began (within EARLY_MS), earliest first; then arms the timer for the next. */
  private runDue(): void {
    this.armed = undefined;
    this.immediate = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const all = this.stopping?.aborted === true;
    const until = this.base.now() + EARLY_MS;
    // Jobs a job queues for now run in this turn too (a wait of 0 ms); the limit keeps a job that always
    // queues itself again from holding the turn.
    let left = this.queue.length * 2 + 16;
    try {
      while (this.queue.length > 0 && left-- > 0) {
        if (!all && this.dues[0]! > until) break;
        const first = this.queue[0]!;
        this.running = first;
        first.run();
        this.done(first);
      }
    } finally {
      this.done(this.running);
      this.arm();
    }
  }

  /** Arms the one timer for the earliest job (at once when the server is stopping), unless it already is. */
  private arm(): void {
    const first = this.queue[0];
    if (!first) return;
    if (this.stopping?.aborted) {
      if (this.armed !== undefined) this.base.clearTimeout(this.armed);
      this.armed = undefined;
      this.armedFor = Number.NEGATIVE_INFINITY;
      this.immediate ??= this.setImmediate(this.turn);
      return;
    }
    const due = this.dues[0]!;
    if (this.immediate !== undefined || due >= this.armedFor) return;
    if (this.armed !== undefined) this.base.clearTimeout(this.armed);
    this.armedFor = due;
    // A job further away than a timer can wait (none is, with the time limits) wakes the pacer early, which arms again.
    this.armed = this.base.setTimeout(this.turn, Math.min(MAX_TIMER_MS, Math.max(0, due - this.base.now())));
  }

  /** Takes out a job that has run, unless it queued itself again or was cancelled. */
  private done(job: Paced | undefined): void {
    if (job === undefined || job !== this.running) return;
    this.running = undefined;
    if (job.slot >= 0) this.remove(job);
  }

  private grow(): void {
    const dues = new Float64Array(this.dues.length * 2);
    const orders = new Float64Array(dues.length);
    dues.set(this.dues);
    orders.set(this.orderOf);
    this.dues = dues;
    this.orderOf = orders;
  }

  private remove(job: Paced): void {
    const q = this.queue;
    const at = job.slot;
    const last = q.pop()!;
    job.slot = -1;
    const n = q.length;
    if (at === n) return;
    const due = this.dues[n]!;
    const order = this.orderOf[n]!;
    this.down(at, last, due, order);
    this.up(last.slot, last, due, order);
  }

  /** Places `job` (of `due` and `order`) at `at` or above it, moving down the jobs after it. */
  private up(at: number, job: Paced, due: number, order: number): void {
    const { queue: q, dues, orderOf } = this;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const pd = dues[parent]!;
      const po = orderOf[parent]!;
      if (pd < due || (pd === due && po < order)) break;
      const p = q[parent]!;
      q[at] = p;
      dues[at] = pd;
      orderOf[at] = po;
      p.slot = at;
      at = parent;
    }
    q[at] = job;
    dues[at] = due;
    orderOf[at] = order;
    job.slot = at;
  }

  /** Places `job` (of `due` and `order`) at `at` or below it, moving up the jobs before it. */
  private down(at: number, job: Paced, due: number, order: number): void {
    const { queue: q, dues, orderOf } = this;
    const n = q.length;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= n) break;
      let cd = dues[child]!;
      let co = orderOf[child]!;
      const right = child + 1;
      if (right < n) {
        const rd = dues[right]!;
        const ro = orderOf[right]!;
        if (rd < cd || (rd === cd && ro < co)) {
          child = right;
          cd = rd;
          co = ro;
        }
      }
      if (!(cd < due || (cd === due && co < order))) break;
      const c = q[child]!;
      q[at] = c;
      dues[at] = cd;
      orderOf[at] = co;
      c.slot = at;
      at = child;
    }
    q[at] = job;
    dues[at] = due;
    orderOf[at] = order;
    job.slot = at;
  }
}
