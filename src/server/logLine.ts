import type { RequestRecord } from '../domain/journal/journal.js';
import { scrubPath } from '../domain/secrets.js';
import { memo } from '../lib/memo.js';
import type { LogWriter } from './logWriter.js';

const str = (v: string | undefined | null): string => (v == null ? 'null' : JSON.stringify(v));

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');
const HEAD = {
  info: bytes('{"level":"info","time":"'),
  warn: bytes('{"level":"warn","time":"'),
  debug: bytes('{"level":"debug","time":"'),
};
const AFTER_TIME = bytes('Z","reqId":');
const LATENCY = bytes(',"latencyMs":');
const DIGIT_0 = 48;
const QUOTE = 34;
const DOT = 46;

/**
 * Writes `text` as a JSON string (quoted) at `at` when it is ASCII and needs no escape, as a request id
 * is by construction, returning where it ended; -1 (and nothing worth keeping written) otherwise.
 */
function writePlainString(buf: Buffer, at: number, text: string): number {
  buf[at++] = QUOTE;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === QUOTE || c === 0x5c) return -1;
    buf[at++] = c;
  }
  buf[at++] = QUOTE;
  return at;
}

/** Writes the decimal digits of a whole number 0 <= n < 2^31 at `at`; returns where they ended. */
function writeDigits(buf: Buffer, at: number, n: number): number {
  let end = at + 1;
  for (let m = n; m >= 10; m = Math.floor(m / 10)) end++;
  for (let i = end - 1, m = n; i >= at; i--, m = Math.floor(m / 10)) buf[i] = DIGIT_0 + (m % 10);
  return end;
}

/** Writes String(ms) for a latency as the request record rounds it (to hundredths), or its JSON (null) otherwise. */
function writeLatency(buf: Buffer, at: number, ms: number): number {
  if (!Number.isFinite(ms)) return at + buf.write('null', at, 'latin1');
  const hundredths = Math.round(ms * 100);
  if (ms < 0 || hundredths / 100 !== ms || hundredths > 0x3fffffff) return at + buf.write(String(ms), at, 'latin1');
  at = writeDigits(buf, at, Math.floor(hundredths / 100));
  const fraction = hundredths % 100;
  if (fraction === 0) return at;
  buf[at++] = DOT;
  buf[at++] = DIGIT_0 + Math.floor(fraction / 10);
  if (fraction % 10 !== 0) buf[at++] = DIGIT_0 + (fraction % 10);
  return at;
}

// The most bytes a latency takes: String() of any number is at most 25 characters ("-1.2345678901234567e-308").
const MAX_LATENCY_BYTES = 25;

// Lines kept aside for the stdout writer at most, before they are made at once (LineQueue).
const QUEUED_LINES = 1024;

/** The head of a request's line: a 5xx nobody asked for is a warning, a health check's success a debug line (a
 * container probe every few seconds would fill the log at info). */
export function levelOf(r: RequestRecord, isProbe: (operation: string | undefined) => boolean): keyof typeof HEAD {
  return r.status >= 500 && !r.fault ? 'warn' : r.status < 400 && isProbe(r.operation) ? 'debug' : 'info';
}

export { HEAD };

/**
 * The two runs of a line's bytes that repeat from request to request (same client, same operation, same answer):
 * between the id and the latency (`route`), and after the latency (`outcome`). Each is kept as bytes with the values
 * it was made of, and made again only when one of them differs from the last line's. What a client chose (the path,
 * a fault, the model name) is masked once per distinct value, the path before it is cut (the line's own scrubbing
 * could not recognise a key percent-encoded, or cut in two); the rest is the mock's own words.
 */
export class LineRuns {
  private readonly pathText: (raw: string) => string;
  private readonly clientText: (raw: string) => string;
  private readonly plain = memo(256, str);
  private readonly last = {
    method: '',
    path: '',
    operation: undefined as string | undefined,
    status: 0,
    fault: undefined as string | undefined,
    stream: undefined as string | undefined,
    keyLabel: undefined as string | undefined,
    errorCode: undefined as string | null | undefined,
    model: undefined as string | undefined,
    retryCount: undefined as number | undefined,
  };
  route: Buffer = Buffer.alloc(0);
  outcome: Buffer = Buffer.alloc(0);

  /** `maxPath`: records.maxPathChars, past which a path is cut; `scrub`: the configured secrets' mask. */
  constructor(maxPath: number, scrub: (text: string) => string) {
    this.pathText = memo(1024, (raw) => {
      const path = scrubPath(raw, scrub);
      return str(path.length > maxPath ? `${path.slice(0, maxPath)}...` : path);
    });
    this.clientText = memo(256, (v) => str(scrub(v)));
  }

  /** Brings both runs up to the record `r`. */
  update(r: RequestRecord): void {
    const last = this.last;
    if (
      r.method !== last.method ||
      r.path !== last.path ||
      r.operation !== last.operation ||
      r.status !== last.status ||
      this.route.length === 0
    )
      this.route = this.routeOf(r);
    if (
      r.fault !== last.fault ||
      r.stream !== last.stream ||
      r.keyLabel !== last.keyLabel ||
      r.errorCode !== last.errorCode ||
      r.model !== last.model ||
      r.retryCount !== last.retryCount ||
      this.outcome.length === 0
    )
      this.outcome = this.outcomeOf(r);
  }

  private routeOf(r: RequestRecord): Buffer {
    const { last, plain } = this;
    last.method = r.method;
    last.path = r.path;
    last.operation = r.operation;
    last.status = r.status;
    return bytes(
      [
        ',"method":',
        plain(r.method),
        ',"path":',
        this.pathText(r.path),
        ',"operation":',
        r.operation == null ? 'null' : plain(r.operation),
        ',"status":',
        String(r.status),
      ].join(''),
    );
  }

  private outcomeOf(r: RequestRecord): Buffer {
    const { last, plain, clientText } = this;
    last.fault = r.fault;
    last.stream = r.stream;
    last.keyLabel = r.keyLabel;
    last.errorCode = r.errorCode;
    last.model = r.model;
    last.retryCount = r.retryCount;
    // prettier-ignore
    return bytes([
      ',"fault":', r.fault == null ? 'null' : clientText(r.fault), ',"stream":', r.stream == null ? 'null' : plain(r.stream),
      ',"keyLabel":', r.keyLabel == null ? 'null' : plain(r.keyLabel), ',"errorCode":', r.errorCode == null ? 'null' : plain(r.errorCode),
      ',"model":', r.model == null ? 'null' : clientText(r.model), ',"retryCount":', r.retryCount == null ? 'null' : String(r.retryCount),
      ',"msg":"request"}\n',
    ].join(''));
  }
}

/**
 * Makes one line at a time into a buffer: `prepare` takes its pieces and says the most bytes it can take, `fill`
 * writes it (the writer's writeWith calls it). The date and time to the second, as toISOString writes it, is made
 * once a second.
 */
export class LineMaker {
  private lastSecond = -1;
  private secondBytes: Buffer = Buffer.alloc(0);
  private head: Buffer = HEAD.info;
  private millis = 0;
  private id = '';
  private latency = 0;
  private route: Buffer = Buffer.alloc(0);
  private outcome: Buffer = Buffer.alloc(0);

  /** Makes a line of these pieces the next to fill; returns the most bytes it can take. */
  prepare(head: Buffer, time: number, id: string, latency: number, route: Buffer, outcome: Buffer): number {
    const second = Math.floor(time / 1000);
    if (second !== this.lastSecond) {
      this.lastSecond = second;
      this.secondBytes = bytes(new Date(second * 1000).toISOString().slice(0, -4));
    }
    this.head = head;
    this.millis = time - second * 1000;
    this.id = id;
    this.latency = latency;
    this.route = route;
    this.outcome = outcome;
    // An id escaped as JSON takes at most 6 bytes a character (\u0001); any other piece is bytes already.
    return (
      head.length +
      this.secondBytes.length +
      3 +
      AFTER_TIME.length +
      6 * id.length +
      2 +
      route.length +
      LATENCY.length +
      MAX_LATENCY_BYTES +
      outcome.length
    );
  }

  /** Writes the prepared line at `start`; returns where it ended. */
  readonly fill = (buf: Buffer, start: number): number => {
    const { head, secondBytes, millis, route, outcome } = this;
    buf.set(head, start);
    let at = start + head.length;
    buf.set(secondBytes, at);
    at += secondBytes.length;
    buf[at++] = DIGIT_0 + Math.floor(millis / 100);
    buf[at++] = DIGIT_0 + (Math.floor(millis / 10) % 10);
    buf[at++] = DIGIT_0 + (millis % 10);
    buf.set(AFTER_TIME, at);
    at += AFTER_TIME.length;
    const idEnd = writePlainString(buf, at, this.id);
    at = idEnd < 0 ? at + buf.write(str(this.id), at, 'utf8') : idEnd;
    buf.set(route, at);
    at += route.length;
    buf.set(LATENCY, at);
    at = writeLatency(buf, at + LATENCY.length, this.latency);
    buf.set(outcome, at);
    return at + outcome.length;
  };
}

/**
 * Lines kept aside for the stdout writer: a request only notes its line's pieces (its head, time, id and latency, and
 * its two runs), and the lines are made when the writer gathers them for a write, up to QUEUED_LINES at a time, in
 * one loop (LogWriter.writeLater).
 */
export class LineQueue {
  // Per line, four pieces (head, id, and the two runs) and two numbers (time, latency).
  private readonly pieces: (Buffer | string)[] = new Array<Buffer | string>(4 * QUEUED_LINES).fill('');
  private readonly numbers = new Float64Array(2 * QUEUED_LINES);
  private queued = 0;

  constructor(
    private readonly writer: LogWriter,
    private readonly maker: LineMaker,
  ) {}

  add(head: Buffer, time: number, id: string, latency: number, route: Buffer, outcome: Buffer): void {
    if (this.queued === QUEUED_LINES) this.gather();
    const k = this.queued++;
    const { pieces, numbers } = this;
    pieces[4 * k] = head;
    pieces[4 * k + 1] = id;
    pieces[4 * k + 2] = route;
    pieces[4 * k + 3] = outcome;
    numbers[2 * k] = time;
    numbers[2 * k + 1] = latency;
    if (k === 0) this.writer.writeLater(this.gather);
  }

  private readonly gather = (): void => {
    const { pieces, numbers, maker, writer } = this;
    const count = this.queued;
    this.queued = 0;
    for (let k = 0; k < count; k++) {
      const most = maker.prepare(
        pieces[4 * k] as Buffer,
        numbers[2 * k]!,
        pieces[4 * k + 1] as string,
        numbers[2 * k + 1]!,
        pieces[4 * k + 2] as Buffer,
        pieces[4 * k + 3] as Buffer,
      );
      writer.writeWith(most, maker.fill);
    }
  };
}
