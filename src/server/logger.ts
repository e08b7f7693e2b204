import { createRequire } from 'node:module';
import type pinoModule from 'pino';
import type { Config } from '../domain/config.js';
import type { ErrorSink } from '../pipeline/errors.js';
import { SAFE_ID, type RequestObserver } from '../pipeline/requestContext.js';
import { loadLimits } from '../domain/limits.js';
import { configSecrets, scrubPath, secretScrubber } from '../domain/secrets.js';
import { findOperation } from '../contract/operations.js';
import { stdoutWriter, type LogWriter } from './logWriter.js';
import { memo } from '../lib/memo.js';

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

// A line longer than this is a sign of an attack or a bug, not useful to read: paths are cut before it.
const MAX_PATH = loadLimits().records.maxPathChars;

/**
 * Stdout, written in batches off the request path (LogWriter): when nobody reads it, lines past 16 MiB
 * waiting are dropped, counted in `/__health` and reported by a warning line as soon as stdout takes lines again.
 */
export function stdoutDestination(): LogWriter {
  return stdoutWriter();
}

/** A pino logger at the configured level whose lines never carry a configured key. */
export function createLogger(config: Pick<Config, 'logLevel' | 'keys' | 'adminToken'>, destination: LogDestination): Logger {
  const scrub = secretScrubber(configSecrets(config));
  const make = pino();
  return make(
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
}

const str = (v: string | undefined | null): string => (v == null ? 'null' : JSON.stringify(v));

// A request id is one safe to echo (requestIdFor): such a text is its own JSON string between quotes, and
// testing it costs a fraction of JSON.stringify, a quarter of the line's own time.
const idText = (id: string): string => (SAFE_ID.test(id) ? `"${id}"` : str(id));

// The texts of a line's time after its second (`123Z`) and of a latency's hundredths (`.05`, `.5`, ``):
// a line takes them from here rather than formatting a date or a fraction.
const MILLIS = Array.from({ length: 1000 }, (_, ms) => `${String(ms).padStart(3, '0')}Z`);
const HUNDREDTHS = Array.from({ length: 100 }, (_, h) => (h === 0 ? '' : String(h / 100).slice(1)));

/** String(ms) for a latency as the request record rounds it (to hundredths), without formatting a fraction. */
function latencyText(ms: number): string {
  if (!Number.isFinite(ms)) return 'null';
  const hundredths = Math.round(ms * 100);
  if (ms < 0 || hundredths / 100 !== ms || hundredths > 0x3fffffff) return String(ms);
  return `${String(Math.floor(hundredths / 100))}${HUNDREDTHS[hundredths % 100]!}`;
}

/**
 * An observer that writes one line per finished request; a 5xx nobody asked for is a warning, and a
 * health check is a debug line (a container probe every few seconds would fill the log at info).
 *
 * The line is the one pino would write for these fields, built here as text and handed straight to the
 * logger's destination: no object to serialise, no redaction pass, no scrubbing regex over the line.
 * What a client chose (the path, the model name) is masked once per distinct value, the path before it
 * is cut (the line's own scrubbing could not recognise a key percent-encoded, or cut in two); the key
 * label is the key's mask, made once per key; the rest is the mock's own words.
 */
export function requestLogger(logger: Logger, config: Pick<Config, 'keys' | 'adminToken'> = { keys: [] }): RequestObserver {
  const scrub = secretScrubber(configSecrets(config), { json: false });
  const stream = (logger as unknown as Record<symbol, LogDestination>)[pino().symbols.streamSym]!;
  const pathText = memo(1024, (raw) => {
    const path = scrubPath(raw, scrub);
    return str(path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}...` : path);
  });
  const clientText = memo(256, (v) => str(scrub(v)));
  const plain = memo(256, str);
  let lastSecond = -1;
  // The line is a fixed list of pieces, joined into one flat string: the constant ones set here once, the
  // values put in their slots for each line. A template literal of the same line made about fifty
  // intermediate strings (1.3 KB) per request for the garbage collector; the join makes the line.
  // Between the id and the latency, and after the latency, the fields repeat from request to request
  // (same client, same operation, same answer): each of those two runs is kept as text with the values it
  // was made of, and made again only when one of them differs from the last line's.
  // prettier-ignore
  const line = ['{"level":"', '', '","time":"', '', '', '","reqId":', '', '', ',"latencyMs":', '', ''];
  const route = { method: '', path: '', operation: undefined as string | undefined, status: 0, text: '' };
  const outcome = {
    fault: undefined as string | undefined,
    stream: undefined as string | undefined,
    keyLabel: undefined as string | undefined,
    errorCode: undefined as string | null | undefined,
    model: undefined as string | undefined,
    retryCount: undefined as number | undefined,
    text: '',
  };
  return (r) => {
    const level = r.status >= 500 && !r.fault ? 'warn' : r.status < 400 && findOperation(r.operation)?.probe ? 'debug' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    // The time as toISOString writes it: the date and time to the second made once a second, then the milliseconds.
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (second !== lastSecond) {
      lastSecond = second;
      line[3] = new Date(second * 1000).toISOString().slice(0, -4);
    }
    line[4] = MILLIS[now - second * 1000]!;
    if (r.method !== route.method || r.path !== route.path || r.operation !== route.operation || r.status !== route.status || route.text === '') {
      route.method = r.method;
      route.path = r.path;
      route.operation = r.operation;
      route.status = r.status;
      route.text = [
        ',"method":',
        plain(r.method),
        ',"path":',
        pathText(r.path),
        ',"operation":',
        r.operation == null ? 'null' : plain(r.operation),
        ',"status":',
        String(r.status),
      ].join('');
    }
    if (
      r.fault !== outcome.fault ||
      r.stream !== outcome.stream ||
      r.keyLabel !== outcome.keyLabel ||
      r.errorCode !== outcome.errorCode ||
      r.model !== outcome.model ||
      r.retryCount !== outcome.retryCount ||
      outcome.text === ''
    ) {
      outcome.fault = r.fault;
      outcome.stream = r.stream;
      outcome.keyLabel = r.keyLabel;
      outcome.errorCode = r.errorCode;
      outcome.model = r.model;
      outcome.retryCount = r.retryCount;
      // prettier-ignore
      outcome.text = [
        ',"fault":', r.fault == null ? 'null' : clientText(r.fault), ',"stream":', r.stream == null ? 'null' : plain(r.stream),
        ',"keyLabel":', r.keyLabel == null ? 'null' : plain(r.keyLabel), ',"errorCode":', r.errorCode == null ? 'null' : plain(r.errorCode),
        ',"model":', r.model == null ? 'null' : clientText(r.model), ',"retryCount":', r.retryCount == null ? 'null' : String(r.retryCount),
        ',"msg":"request"}\n',
      ].join('');
    }
    line[1] = level;
    line[6] = idText(r.requestId);
    line[7] = route.text;
    line[9] = latencyText(r.latencyMs);
    line[10] = outcome.text;
    stream.write(line.join(''));
  };
}

/** An error sink that logs unexpected errors with their stack (for the operator; clients never see it). */
export function errorLogger(logger: Logger): ErrorSink {
  return (err, where) => {
    logger.error({ err, reqId: where.requestId ?? null, method: where.method, path: where.url.split('?')[0]!.slice(0, MAX_PATH) }, 'unexpected error');
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
