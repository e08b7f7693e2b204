import type pinoModule from 'pino';
import type { Config } from '../domain/config.js';
import type { ErrorSink } from '../pipeline/errors.js';
import type { RequestObserver } from '../pipeline/requestContext.js';
import type { Limits } from '../domain/limits.js';
import { configSecrets, secretScrubber } from '../domain/secrets.js';
import { findOperation } from '../contract/operations.js';
import { LogWriter, stdoutWriter } from './logWriter.js';
import { LOG_DESTINATION } from '../lib/symbols.js';
import { HEAD, LineMaker, LineQueue, LineRuns, levelOf } from './logLine.js';
import { requireCjs } from '../lib/require.js';

/** The bounds of a log line: the records fields of fixtures/limits.json (services.limits). */
type LogBounds = Pick<Limits['records'], 'maxPathChars'>;

/** The structured logger of the server (pino). */
export type Logger = pinoModule.Logger;

/** Where log lines go: any writable with write(string). */
export type LogDestination = pinoModule.DestinationStream;

// pino (a CommonJS package) is loaded when a logger is made: a server started without logging, as in
// tests and embedded use, never pays its import.
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
  (logger as MadeLogger)[LOG_DESTINATION] = destination;
  return logger;
}

/** A logger made by createLogger, with the destination it was given. */
type MadeLogger = Logger & { [LOG_DESTINATION]?: LogDestination };

/**
 * An observer that writes one line per finished request (levelOf says at which level).
 *
 * The line is the one pino would write for these fields, written here as bytes and handed straight to
 * the logger's destination (the one createLogger was given: `logger` must be made by createLogger): no
 * object to serialise, no redaction pass, no scrubbing regex over the line, and, into the stdout writer,
 * no string at all (logLine.ts: the runs of bytes lines share, the line made into a buffer, the lines kept aside).
 */
export function requestLogger(
  logger: Logger,
  records: LogBounds,
  config: Pick<Config, 'keys' | 'adminToken'> = { keys: [] },
): RequestObserver {
  // Its own slot: a child logger (made by pino, with bindings of its own) would find its parent's through its prototype.
  const stream = Object.hasOwn(logger, LOG_DESTINATION) ? (logger as MadeLogger)[LOG_DESTINATION] : undefined;
  if (!stream) throw new Error('requestLogger writes to the destination of a logger made by createLogger');
  // A line longer than records.maxPathChars is a sign of an attack or a bug, not useful to read: paths are cut before.
  const runs = new LineRuns(records.maxPathChars, secretScrubber(configSecrets(config), { json: false }));
  const maker = new LineMaker();
  const queue = stream instanceof LogWriter ? new LineQueue(stream, maker) : undefined;
  let scratch: Buffer = Buffer.alloc(1024);
  return (r) => {
    const level = levelOf(r, isProbe);
    if (!logger.isLevelEnabled(level)) return;
    runs.update(r);
    // The record's own time: the line and the journal entry of a request say the same millisecond.
    if (queue) return queue.add(HEAD[level], r.time, r.requestId, r.latencyMs, runs.route, runs.outcome);
    const most = maker.prepare(HEAD[level], r.time, r.requestId, r.latencyMs, runs.route, runs.outcome);
    if (scratch.length < most) scratch = Buffer.alloc(Math.max(most, scratch.length * 2));
    stream.write(scratch.toString('utf8', 0, maker.fill(scratch, 0)));
  };
}

const isProbe = (operation: string | undefined): boolean => findOperation(operation)?.probe === true;

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
