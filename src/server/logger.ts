import { createRequire } from 'node:module';
import type pinoModule from 'pino';
import type { Config } from '../domain/config.js';
import type { ErrorSink } from '../pipeline/errors.js';
import type { RequestObserver } from '../pipeline/requestContext.js';
import type { Limits } from '../domain/limits.js';
import { configSecrets, scrubPath, secretScrubber } from '../domain/secrets.js';
import { findOperation } from '../contract/operations.js';
import { LogWriter, stdoutWriter } from './logWriter.js';
import { memo } from '../lib/memo.js';

/** The bounds of a log line: the records fields of fixtures/limits.json (services.limits). */
export type LogBounds = Pick<Limits['records'], 'maxPathChars'>;

/** The structured logger of the server (pino). */
export type Logger = pinoModule.Logger;

/** Where log lines go: any writable with write(string). */
export type LogDestination = pinoModule.DestinationStream;

// pino (a CommonJS package) is loaded when a logger is made: a server started without logging, as in
// tests and embedded use, never pays its import.
const requireCjs = createRequire(import.meta.url);
const pino = (): typeof pinoModule => requireCjs('pino') as typeof pinoModule;

// Request records never hold a key; these paths are a second line of defence for anything that might.
const REDACT = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
  'key',
  'apiKey',
  'api_key',
  'token',
  'adminToken',
  'admin_token',
  '*.key',
  '*.apiKey',
  '*.api_key',
  '*.token',
  '*.adminToken',
];

/**
 * Stdout, written in batches off the request path (LogWriter): when nobody reads it, lines past 16 MiB
 * waiting are dropped, counted in `/__health` and reported by a warning line as soon as stdout takes lines again.
 */
export function stdoutDestination(): LogWriter {
  return stdoutWriter();
}

/** A pino logger at the configured level whose lines never carry a configured key. */
export function createLogger(
  config: Pick<Config, 'logLevel' | 'keys' | 'adminToken'>,
  destination: LogDestination,
): Logger {
  const scrub = secretScrubber(configSecrets(config));
  const make = pino();
  const logger = make(
    {
      level: config.logLevel,
      base: undefined,
      timestamp: make.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT, censor: '[redacted]' },
      hooks: { streamWrite: scrub },
    },
    destination,
  );
  destinations.set(logger, destination);
  return logger;
}

// Each logger's destination, as createLogger was given it: requestLogger writes its lines there itself.
// (pino keeps it under a symbol of its own, which no documentation promises.)
const destinations = new WeakMap<Logger, LogDestination>();

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

// Lines kept aside for the stdout writer at most, before they are made at once (see requestLogger).
const QUEUED_LINES = 1024;

/**
 * An observer that writes one line per finished request; a 5xx nobody asked for is a warning, and a
 * health check is a debug line (a container probe every few seconds would fill the log at info).
 *
 * The line is the one pino would write for these fields, written here as bytes and handed straight to
 * the logger's destination (the one createLogger was given: `logger` must be made by createLogger): no
 * object to serialise, no redaction pass, no scrubbing regex over the line, and, into the stdout writer,
 * no string at all. What a client chose (the path, the model name) is
 * masked once per distinct value, the path before it is cut (the line's own scrubbing could not
 * recognise a key percent-encoded, or cut in two); the key label is the key's mask, made once per key;
 * the rest is the mock's own words.
 *
 * Into the stdout writer, a request only notes its line's pieces (its level, time, id and latency, and
 * the two runs of bytes it shares with the lines around it), and the lines are made when the writer
 * gathers them for a write, up to QUEUED_LINES at a time, in one loop (LogWriter.writeLater).
 */
export function requestLogger(
  logger: Logger,
  records: LogBounds,
  config: Pick<Config, 'keys' | 'adminToken'> = { keys: [] },
): RequestObserver {
  // A line longer than this is a sign of an attack or a bug, not useful to read: paths are cut before it.
  const maxPath = records.maxPathChars;
  const scrub = secretScrubber(configSecrets(config), { json: false });
  const stream = destinations.get(logger);
  if (!stream) throw new Error('requestLogger writes to the destination of a logger made by createLogger');
  const writer = stream instanceof LogWriter ? stream : undefined;
  const pathText = memo(1024, (raw) => {
    const path = scrubPath(raw, scrub);
    return str(path.length > maxPath ? `${path.slice(0, maxPath)}...` : path);
  });
  const clientText = memo(256, (v) => str(scrub(v)));
  const plain = memo(256, str);
  // The date and time to the second, as toISOString writes it, made once a second.
  let lastSecond = -1;
  let secondBytes: Buffer = Buffer.alloc(0);
  // Between the id and the latency, and after the latency, the fields repeat from request to request
  // (same client, same operation, same answer): each of those two runs is kept as bytes with the values
  // it was made of, and made again only when one of them differs from the last line's.
  const route = {
    method: '',
    path: '',
    operation: undefined as string | undefined,
    status: 0,
    bytes: Buffer.alloc(0) as Buffer,
  };
  const outcome = {
    fault: undefined as string | undefined,
    stream: undefined as string | undefined,
    keyLabel: undefined as string | undefined,
    errorCode: undefined as string | null | undefined,
    model: undefined as string | undefined,
    retryCount: undefined as number | undefined,
    bytes: Buffer.alloc(0) as Buffer,
  };
  // The line being written: its level's head, its millisecond, its id and latency, and its two runs.
  let head = HEAD.info;
  let millis = 0;
  let id = '';
  let latency = 0;
  let routeBytes: Buffer = route.bytes;
  let outcomeBytes: Buffer = outcome.bytes;
  /** Makes a line of these pieces the next to fill; returns the most bytes it can take. */
  const prepare = (
    lineHead: Buffer,
    time: number,
    lineId: string,
    lineLatency: number,
    lineRoute: Buffer,
    lineOutcome: Buffer,
  ): number => {
    const second = Math.floor(time / 1000);
    if (second !== lastSecond) {
      lastSecond = second;
      secondBytes = bytes(new Date(second * 1000).toISOString().slice(0, -4));
    }
    head = lineHead;
    millis = time - second * 1000;
    id = lineId;
    latency = lineLatency;
    routeBytes = lineRoute;
    outcomeBytes = lineOutcome;
    // An id escaped as JSON takes at most 6 bytes a character (\u0001); any other piece is bytes already.
    return (
      head.length +
      secondBytes.length +
      3 +
      AFTER_TIME.length +
      6 * id.length +
      2 +
      routeBytes.length +
      LATENCY.length +
      MAX_LATENCY_BYTES +
      outcomeBytes.length
    );
  };
  const fill = (buf: Buffer, start: number): number => {
    buf.set(head, start);
    let at = start + head.length;
    buf.set(secondBytes, at);
    at += secondBytes.length;
    buf[at++] = DIGIT_0 + Math.floor(millis / 100);
    buf[at++] = DIGIT_0 + (Math.floor(millis / 10) % 10);
    buf[at++] = DIGIT_0 + (millis % 10);
    buf.set(AFTER_TIME, at);
    at += AFTER_TIME.length;
    const idEnd = writePlainString(buf, at, id);
    at = idEnd < 0 ? at + buf.write(str(id), at, 'utf8') : idEnd;
    buf.set(routeBytes, at);
    at += routeBytes.length;
    buf.set(LATENCY, at);
    at = writeLatency(buf, at + LATENCY.length, latency);
    buf.set(outcomeBytes, at);
    return at + outcomeBytes.length;
  };
  // The lines kept aside: per line, four pieces (head, id, and the two runs) and two numbers (time, latency).
  const pieces: (Buffer | string)[] = new Array<Buffer | string>(4 * QUEUED_LINES).fill('');
  const numbers = new Float64Array(2 * QUEUED_LINES);
  let queued = 0;
  const gather = (): void => {
    const count = queued;
    queued = 0;
    for (let k = 0; k < count; k++) {
      const most = prepare(
        pieces[4 * k] as Buffer,
        numbers[2 * k]!,
        pieces[4 * k + 1] as string,
        numbers[2 * k + 1]!,
        pieces[4 * k + 2] as Buffer,
        pieces[4 * k + 3] as Buffer,
      );
      writer!.writeWith(most, fill);
    }
  };
  let scratch: Buffer = Buffer.alloc(1024);
  return (r) => {
    const level =
      r.status >= 500 && !r.fault ? 'warn' : r.status < 400 && findOperation(r.operation)?.probe ? 'debug' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    if (
      r.method !== route.method ||
      r.path !== route.path ||
      r.operation !== route.operation ||
      r.status !== route.status ||
      route.bytes.length === 0
    ) {
      route.method = r.method;
      route.path = r.path;
      route.operation = r.operation;
      route.status = r.status;
      route.bytes = bytes(
        [
          ',"method":',
          plain(r.method),
          ',"path":',
          pathText(r.path),
          ',"operation":',
          r.operation == null ? 'null' : plain(r.operation),
          ',"status":',
          String(r.status),
        ].join(''),
      );
    }
    if (
      r.fault !== outcome.fault ||
      r.stream !== outcome.stream ||
      r.keyLabel !== outcome.keyLabel ||
      r.errorCode !== outcome.errorCode ||
      r.model !== outcome.model ||
      r.retryCount !== outcome.retryCount ||
      outcome.bytes.length === 0
    ) {
      outcome.fault = r.fault;
      outcome.stream = r.stream;
      outcome.keyLabel = r.keyLabel;
      outcome.errorCode = r.errorCode;
      outcome.model = r.model;
      outcome.retryCount = r.retryCount;
      // prettier-ignore
      outcome.bytes = bytes([
        ',"fault":', r.fault == null ? 'null' : clientText(r.fault), ',"stream":', r.stream == null ? 'null' : plain(r.stream),
        ',"keyLabel":', r.keyLabel == null ? 'null' : plain(r.keyLabel), ',"errorCode":', r.errorCode == null ? 'null' : plain(r.errorCode),
        ',"model":', r.model == null ? 'null' : clientText(r.model), ',"retryCount":', r.retryCount == null ? 'null' : String(r.retryCount),
        ',"msg":"request"}\n',
      ].join(''));
    }
    // The record's own time: the line and the journal entry of a request say the same millisecond.
    if (writer) {
      if (queued === QUEUED_LINES) gather();
      const k = queued++;
      pieces[4 * k] = HEAD[level];
      pieces[4 * k + 1] = r.requestId;
      pieces[4 * k + 2] = route.bytes;
      pieces[4 * k + 3] = outcome.bytes;
      numbers[2 * k] = r.time;
      numbers[2 * k + 1] = r.latencyMs;
      if (k === 0) writer.writeLater(gather);
      return;
    }
    const most = prepare(HEAD[level], r.time, r.requestId, r.latencyMs, route.bytes, outcome.bytes);
    if (scratch.length < most) scratch = Buffer.alloc(Math.max(most, scratch.length * 2));
    stream.write(scratch.toString('utf8', 0, fill(scratch, 0)));
  };
}

/** An error sink that logs unexpected errors with their stack (for the operator; clients never see it). */
export function errorLogger(logger: Logger, records: LogBounds): ErrorSink {
  const maxPath = records.maxPathChars;
  return (err, where) => {
    logger.error(
      { err, reqId: where.requestId ?? null, method: where.method, path: where.url.split('?')[0]!.slice(0, maxPath) },
      'unexpected error',
    );
  };
}

/** Writes out buffered log lines; gives up after `timeoutMs` when nobody reads the output. */
export function flushLogger(logger: Logger | undefined, timeoutMs = 1000): Promise<void> {
  if (!logger) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    logger.flush(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
