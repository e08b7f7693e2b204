import { createRequire } from 'node:module';
import type pinoModule from 'pino';
import type { Config } from '../domain/config.js';
import type { ErrorSink } from '../pipeline/errors.js';
import type { RequestObserver, RequestRecord } from '../pipeline/requestContext.js';
import { loadLimits } from '../domain/limits.js';
import { configSecrets, scrubPath, secretScrubber } from '../domain/secrets.js';
import { findOperation } from '../contract/operations.js';

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

/** Stdout through pino's own writer; lines are dropped, not queued, past 16 MB when nobody reads stdout. */
export function stdoutDestination(): LogDestination {
  const dest = pino().destination({ dest: 1, sync: false, minLength: 0, maxLength: 16 * 1024 * 1024 });
  // A reader that went away (EPIPE) costs the log lines, never the server.
  dest.on('error', () => {});
  return dest;
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

/**
 * The fields of one request's log line. The path is masked before it is cut: the line's own scrubbing
 * cannot recognise a key that is percent-encoded, or cut in two.
 */
function requestFields(r: RequestRecord, scrub: (text: string) => string): Record<string, unknown> {
  const path = scrubPath(r.path, scrub);
  return {
    reqId: r.requestId,
    method: r.method,
    path: path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}...` : path,
    operation: r.operation ?? null,
    status: r.status,
    latencyMs: r.latencyMs,
    fault: r.fault ?? null,
    stream: r.stream ?? null,
    keyLabel: r.keyLabel ?? null,
    errorCode: r.errorCode ?? null,
    model: r.model ?? null,
    retryCount: r.retryCount ?? null,
  };
}

/**
 * An observer that writes one line per finished request; a 5xx nobody asked for is a warning, and a
 * health check is a debug line (a container probe every few seconds would fill the log at info).
 */
export function requestLogger(logger: Logger, config: Pick<Config, 'keys' | 'adminToken'> = { keys: [] }): RequestObserver {
  const scrub = secretScrubber(configSecrets(config), { json: false });
  return (record) => {
    const level = record.status >= 500 && !record.fault ? 'warn' : record.status < 400 && findOperation(record.operation)?.probe ? 'debug' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    logger[level](requestFields(record, scrub), 'request');
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
