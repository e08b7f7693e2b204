/**
 * Pure parts of the paced-streams scenario (`--only streams-paced`): where each token of a captured stream
 * is, counting events in raw socket reads, and the lateness of the tokens that arrived.
 */
import { percentile } from './report.js';
import type { PacedFigures } from './results.js';

/** What the scenario asks every server for: `tokens` tokens, the first after `ttftMs`, then `tps` a second. */
export interface PacedPlan {
  readonly tokens: number;
  readonly tps: number;
  readonly ttftMs: number;
}

/** The events of a captured SSE body, each with its blank-line terminator, as the servers write them. */
export const sseEvents = (body: string): string[] => body.match(/[^]*?\n\n/g) ?? [];

/** True when an event's data is a chunk with text in it: a chunk that carries a token. */
function carriesText(event: string): boolean {
  const data = event.startsWith('data: ') ? event.slice(6).trim() : '';
  if (!data.startsWith('{')) return false;
  const chunk = JSON.parse(data) as { choices?: { delta?: { content?: unknown } }[] };
  const content = chunk.choices?.[0]?.delta?.content;
  return typeof content === 'string' && content.length > 0;
}

/**
 * Where the tokens of a captured stream are: for each event, the index of the token it carries, or -1 (the
 * role chunk, the finish chunk, [DONE]). Each server sends one token per event when paced, so a token's
 * index is the count of text-carrying events before it; a stream with any other count of them than
 * `tokens` is refused, since then an event carries more than one token or the reply is not the one asked for.
 */
export function tokenLayout(body: string, tokens: number): number[] {
  let k = 0;
  const layout = sseEvents(body).map((e) => (carriesText(e) ? k++ : -1));
  if (k !== tokens)
    throw new Error(`the stream has ${k} events with text, expected one per token (${tokens}): ${body.slice(0, 300)}`);
  return layout;
}

/**
 * For each event of a layout, how many tokens are paced before it is due: an event is due at the first
 * token's time plus that many token intervals (the role chunk goes with the first token, the finish chunk and
 * [DONE] one interval after the last, as the mock writes them).
 */
export function tokensBefore(layout: readonly number[]): number[] {
  let seen = 0;
  return layout.map((k) => (k >= 0 ? seen++ : seen));
}

/**
 * Counts the SSE events (blank lines, `\n\n`) in the raw bytes of a response read by read, without parsing
 * them: a pair split between two reads is counted once. The head (`\r\n` lines) and chunked framing have
 * no `\n\n`, and every server writes whole events, so no pair is split by framing.
 */
export class EventCounter {
  private pending = false;

  /** The events that end in this read. */
  feed(chunk: Uint8Array): number {
    let n = 0;
    let i = 0;
    if (this.pending && chunk[0] === 10) {
      n++;
      i = 1;
    }
    this.pending = false;
    while ((i = chunk.indexOf(10, i)) !== -1) {
      if (i + 1 === chunk.length) {
        this.pending = true;
        break;
      }
      if (chunk[i + 1] === 10) {
        n++;
        i += 2;
      } else i++;
    }
    return n;
  }
}

/** The last `size` bytes of a response read into a reused buffer, read by read. */
export class LastBytes {
  private readonly last: Buffer;
  private kept = 0;

  constructor(private readonly size: number) {
    this.last = Buffer.alloc(size);
  }

  /** Keeps the end of this read: the first `n` bytes of `read`. */
  keep(read: Uint8Array, n: number): void {
    if (n >= this.size) {
      this.last.set(read.subarray(n - this.size, n));
      this.kept = this.size;
      return;
    }
    const old = Math.min(this.kept, this.size - n);
    this.last.copyWithin(0, this.kept - old, this.kept);
    this.last.set(read.subarray(0, n), old);
    this.kept = old + n;
  }

  bytes(): Buffer {
    return this.last.subarray(0, this.kept);
  }
}

/** One stream as the load client saw it. */
export interface StreamRecord {
  /** When the request was written (performance.now()), or NaN if it never was. */
  sentAt: number;
  /** When each event arrived: the time of the read it ended in. */
  readonly arrivals: Float64Array;
  /** Events counted, including any beyond the expected ones. */
  events: number;
  status: number;
  /** The response ended with all its events, the last being [DONE]. */
  complete: boolean;
  /** A transport error (its code), or 'timeout' when the client gave up on the stream. */
  error?: string;
}

/** The lateness figures of a run's streams, given the layout of the stream each server sends. */
export function lateness(
  records: readonly StreamRecord[],
  layout: readonly number[],
  plan: PacedPlan,
): Pick<
  PacedFigures,
  | 'streams'
  | 'completed'
  | 'failed'
  | 'errors'
  | 'errorCodes'
  | 'tokens'
  | 'latenessP50Ms'
  | 'latenessP99Ms'
  | 'latenessMaxMs'
  | 'firstTokenP99Ms'
  | 'gaps'
> {
  const interval = 1000 / plan.tps;
  const tokenEvents = layout.flatMap((k, e) => (k >= 0 ? [e] : []));
  const late = new Float64Array(records.length * Math.max(0, tokenEvents.length - 1));
  const first: number[] = [];
  let n = 0;
  let tokens = 0;
  let gaps = 0;
  for (const r of records) {
    const got = tokenEvents.filter((e) => e < r.events).length;
    tokens += got;
    if (got === 0) continue;
    const t0 = r.arrivals[tokenEvents[0]!]!;
    first.push(t0 - (r.sentAt + plan.ttftMs));
    for (let k = 1; k < got; k++) {
      const at = r.arrivals[tokenEvents[k]!]!;
      late[n++] = at - (t0 + k * interval);
      if (at - r.arrivals[tokenEvents[k - 1]!]! > 2 * interval) gaps++;
    }
  }
  const sorted = late.subarray(0, n).sort();
  first.sort((a, b) => a - b);
  const completed = records.filter((r) => r.complete).length;
  const errorCodes: Record<string, number> = {};
  for (const r of records)
    if (!r.complete && r.error !== undefined) errorCodes[r.error] = (errorCodes[r.error] ?? 0) + 1;
  const errors = Object.values(errorCodes).reduce((a, b) => a + b, 0);
  return {
    streams: records.length,
    completed,
    failed: records.length - completed - errors,
    errors,
    errorCodes,
    tokens,
    latenessP50Ms: percentile(sorted, 0.5),
    latenessP99Ms: percentile(sorted, 0.99),
    latenessMaxMs: n ? sorted[n - 1]! : Number.NaN,
    firstTokenP99Ms: percentile(first, 0.99),
    gaps,
  };
}

/** The raw bytes of one HTTP/1.1 request that asks the server to close the connection after its answer. */
export function rawRequest(url: string, path: string, headers: Record<string, string>, body: Buffer): Buffer {
  const { host } = new URL(url);
  const lines = [
    `POST ${path} HTTP/1.1`,
    `host: ${host}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    `content-length: ${body.length}`,
    'connection: close',
  ];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]);
}
