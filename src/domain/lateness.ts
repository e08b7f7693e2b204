// Buckets grow by 2^(1/16), about 4.4 %, from 10 µs to beyond ten minutes: a quantile read from them is
// at most 4.4 % above the true value, and recording one is a logarithm and an increment.
const STEPS_PER_DOUBLING = 16;
const FIRST_MS = 0.01;
const BUCKETS = 400;
const upper = (i: number) => FIRST_MS * 2 ** (i / STEPS_PER_DOUBLING);

/** A quantile of a histogram, in ms, rounded to a tenth (two decimals below 1 ms). */
const rounded = (ms: number) => (ms < 1 ? Math.round(ms * 100) / 100 : Math.round(ms * 10) / 10);

/** What a histogram says: how many, and the median, 99th percentile and maximum in ms (null when empty). */
interface LatenessFigures {
  readonly count: number;
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
  readonly maxMs: number | null;
}

/**
 * How late things happened against their schedule, in ms, as a histogram of fixed logarithmic buckets:
 * constant memory whatever the count. Early (a negative lateness) counts as on time.
 */
export class LatenessHistogram {
  private readonly counts = new Float64Array(BUCKETS);
  private total = 0;
  private max = 0;
  private sumMs = 0;

  record(ms: number): void {
    const late = ms > 0 ? ms : 0;
    this.sumMs += late;
    const i = late <= FIRST_MS ? 0 : Math.ceil(Math.log2(late / FIRST_MS) * STEPS_PER_DOUBLING);
    this.counts[i < BUCKETS ? i : BUCKETS - 1]!++;
    this.total++;
    if (late > this.max) this.max = late;
  }

  get count(): number {
    return this.total;
  }

  /** Every lateness recorded, added up, in ms. */
  get sum(): number {
    return this.sumMs;
  }

  /**
   * How many were at most each bound (ms, increasing): a Prometheus histogram's cumulative buckets, read from these
   * finer ones. A bucket that straddles a bound counts under the next one, so a count is at most one bucket (4.4 %)
   * behind the bound.
   */
  atMost(boundsMs: readonly number[]): number[] {
    const out: number[] = [];
    let seen = 0;
    let i = 0;
    for (const bound of boundsMs) {
      while (i < BUCKETS - 1 && upper(i) <= bound) seen += this.counts[i++]!;
      out.push(seen);
    }
    return out;
  }

  /** The smallest bucket bound at or above the q-quantile (never above the maximum seen). */
  quantile(q: number): number | null {
    if (this.total === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.total));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      // The last bucket has no upper bound: what it holds is at most the maximum.
      if (seen >= rank) return i === BUCKETS - 1 ? this.max : Math.min(i === 0 ? 0 : upper(i), this.max);
    }
    return this.max;
  }

  figures(): LatenessFigures {
    const q = (x: number) => {
      const v = this.quantile(x);
      return v === null ? null : rounded(v);
    };
    return { count: this.total, p50Ms: q(0.5), p99Ms: q(0.99), maxMs: this.total ? rounded(this.max) : null };
  }

  clear(): void {
    this.counts.fill(0);
    this.total = 0;
    this.max = 0;
    this.sumMs = 0;
  }
}

/**
 * What the server's paced streams have done since it started (or since the last reset): how many are
 * open, and how late their events were written against their schedules, the first event (time to first
 * token) apart from the rest. A load tester reads it (GET /__admin/streams) to tell the mock's lateness
 * from the gateway's.
 */
export class StreamStats {
  open = 0;
  started = 0;
  /** Every paced event but the first of its stream: written at its time after the one before. */
  readonly events = new LatenessHistogram();
  /** The first event of each stream with a time to first token: written at the head's time plus that wait. */
  readonly firstEvents = new LatenessHistogram();
  private since = Date.now();

  clear(): void {
    this.started = 0;
    this.events.clear();
    this.firstEvents.clear();
    this.since = Date.now();
  }

  toJson() {
    return {
      object: 'stream_stats',
      since: new Date(this.since).toISOString(),
      open: this.open,
      started: this.started,
      lateness: { events: this.events.figures(), firstEvents: this.firstEvents.figures() },
    };
  }
}
