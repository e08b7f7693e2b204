import type { JournalEntry } from '../../domain/journal/journal.js';

/**
 * One HTTP attempt of the client, read from the journal. Times are ms from the run's first attempt:
 * the journal stamps an entry when the exchange ends (`time`) and says how long it took (`latencyMs`),
 * so an attempt starts at `time - latencyMs`.
 */
export interface Attempt {
  /** 1-based, in the order the attempts started. */
  readonly n: number;
  /** Which request (first try plus its retries) it belongs to: 1-based. */
  readonly request: number;
  readonly start: number;
  readonly end: number;
  /** 0 when no HTTP status reached the client (reset, empty close, the client left first). */
  readonly status: number;
  readonly retryCount: number | undefined;
  /** The wait the answer asked for (retry-after-ms). */
  readonly retryAfterMs: number | undefined;
  /** How a body ended: completed, aborted (the client left), cut, stalled. */
  readonly stream: string | undefined;
  readonly bodyHash: string | undefined;
  readonly fault: string | undefined;
  /** From the end of the request's previous attempt to the start of this one; undefined for a first try. */
  readonly gapMs: number | undefined;
}

const round = (ms: number) => Math.round(ms);

interface Open {
  readonly id: number;
  last: { retryCount: number | undefined; end: number; bodyHash: string | undefined };
}

/**
 * Which request each attempt belongs to. A client that numbers its attempts with `x-stainless-retry-count`
 * (the official SDKs retrying) shows it: retry k continues a request whose last attempt was k - 1 and had
 * ended by then, the one with the same body first. A client that never sends a count above 0 does not
 * number them (LangChain retries by sending the SDK's first attempt again), and without a count every
 * attempt of the run is one request: a scenario asks the client for one request at a time.
 */
function requestsOf(
  sorted: readonly { start: number; end: number; retryCount: number | undefined; bodyHash: string | undefined }[],
): number[] {
  if (!sorted.some((a) => a.retryCount !== undefined && a.retryCount > 0)) return sorted.map(() => 1);
  const open: Open[] = [];
  return sorted.map((a) => {
    const k = a.retryCount;
    let into: Open | undefined;
    if (k !== undefined && k > 0) {
      const candidates = open.filter((o) => o.last.retryCount === k - 1 && o.last.end <= a.start);
      candidates.sort(
        (x, y) =>
          Number(y.last.bodyHash === a.bodyHash) - Number(x.last.bodyHash === a.bodyHash) || y.last.end - x.last.end,
      );
      into = candidates[0];
    }
    if (!into) {
      into = { id: open.length + 1, last: a };
      open.push(into);
    } else into.last = a;
    return into.id;
  });
}

/** The attempts at `operation` among the journal's entries, in the order they started. */
export function attemptsOf(entries: readonly JournalEntry[], operation: string): Attempt[] {
  const raw = entries
    .filter((e) => e.operation === operation)
    .map((e) => ({ e, start: e.time - e.latencyMs, end: e.time, retryCount: e.retryCount, bodyHash: e.bodyHash }))
    .sort((a, b) => a.start - b.start);
  if (!raw.length) return [];
  const t0 = raw[0]!.start;
  const requests = requestsOf(raw);
  const lastEnd = new Map<number, number>();
  return raw.map(({ e, start, end }, i) => {
    const request = requests[i]!;
    const before = lastEnd.get(request);
    lastEnd.set(request, end);
    return {
      n: i + 1,
      request,
      start: round(start - t0),
      end: round(end - t0),
      status: e.status,
      retryCount: e.retryCount,
      retryAfterMs: e.retryAfterMs,
      stream: e.stream,
      bodyHash: e.bodyHash,
      fault: e.fault,
      // The mock may notice a connection close a moment after the retry has arrived: no negative gaps.
      gapMs: before === undefined ? undefined : Math.max(0, round(start - before)),
    };
  });
}

/** The attempts grouped by request, each group in start order. */
export function byRequest(attempts: readonly Attempt[]): Attempt[][] {
  const groups = new Map<number, Attempt[]>();
  for (const a of attempts) groups.set(a.request, [...(groups.get(a.request) ?? []), a]);
  return [...groups.values()];
}

/**
 * How many attempts started within `ms` of the run's first: a client that started requests together shows them here.
 */
export function openingBurst(attempts: readonly Attempt[], ms: number): number {
  return attempts.filter((a) => a.start < ms).length;
}

/** The window of `windowMs` that holds the most attempt starts: its first start and how many. */
export function busiestWindow(attempts: readonly Attempt[], windowMs: number): { from: number; count: number } {
  let best = { from: 0, count: 0 };
  let j = 0;
  for (let i = 0; i < attempts.length; i++) {
    while (j < attempts.length && attempts[j]!.start < attempts[i]!.start + windowMs) j++;
    if (j - i > best.count) best = { from: attempts[i]!.start, count: j - i };
  }
  return best;
}
