import { createRequire } from 'node:module';
import type pinoModule from 'pino';
import type { Config } from '../domain/config.js';
import type { ErrorSink } from '../pipeline/errors.js';
import type { RequestObserver } from '../pipeline/requestContext.js';
import { loadLimits } from '../domain/limits.js';
import { configSecrets, scrubPath, secretScrubber } from '../domain/secrets.js';
import { findOperation } from '../contract/operations.js';
import { stdoutWriter, type LogWriter } from './logWriter.js';

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

/**
 * A small map that forgets everything when full: the paths and model names of a server's traffic are
 * few, so each is masked and JSON-escaped once rather than on every line.
 */
function memo(size: number, make: (key: string) => string): (key: string) => string {
  let seen = new Map<string, string>();
  return (key) => {
    let v = seen.get(key);
    if (v === undefined) {
      if (seen.size >= size) seen = new Map();
      v = make(key);
      seen.set(key, v);
    }
    return v;
  };
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
  let lastMs = 0;
  // The line is a fixed list of pieces: the constant ones set here once, the values put in their slots
  // for each line, then joined into one flat string. A template literal of the same line made about
  // fifty intermediate strings (1.3 KB) per request for the garbage collector; the join makes the line.
  // prettier-ignore
  const line = [
    '{"level":"', '', '","time":"', '', '","reqId":', '', ',"method":', '', ',"path":', '',
    ',"operation":', '', ',"status":', '', ',"latencyMs":', '', ',"fault":', '', ',"stream":', '',
    ',"keyLabel":', '', ',"errorCode":', '', ',"model":', '', ',"retryCount":', '', ',"msg":"request"}\n',
  ];
  return (r) => {
    const level = r.status >= 500 && !r.fault ? 'warn' : r.status < 400 && findOperation(r.operation)?.probe ? 'debug' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      line[3] = new Date(now).toISOString();
    }
    line[1] = level;
    line[5] = str(r.requestId);
    line[7] = plain(r.method);
    line[9] = pathText(r.path);
    line[11] = r.operation == null ? 'null' : plain(r.operation);
    line[13] = String(r.status);
    line[15] = Number.isFinite(r.latencyMs) ? String(r.latencyMs) : 'null';
    line[17] = r.fault == null ? 'null' : clientText(r.fault);
    line[19] = r.stream == null ? 'null' : plain(r.stream);
    line[21] = r.keyLabel == null ? 'null' : plain(r.keyLabel);
    line[23] = r.errorCode == null ? 'null' : plain(r.errorCode);
    line[25] = r.model == null ? 'null' : clientText(r.model);
    line[27] = r.retryCount == null ? 'null' : String(r.retryCount);
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
