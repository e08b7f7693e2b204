import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type AppHooks, type MockApp } from '../app/createApp.js';
import { http } from '../lib/cjs.js';
import { runWhileIdle } from '../text/warmup.js';
import { loadSteps } from '../text/tokenizer.js';
import { warmPathSteps } from './warmPath.js';
import type { ConfigInput } from '../domain/config.js';
import { ConnectionTracker } from './connections.js';
import type { ErrorSink } from '../pipeline/errors.js';
import type { RequestObserver } from '../pipeline/requestContext.js';
import {
  createLogger,
  errorLogger,
  requestLogger,
  stdoutDestination,
  type LogDestination,
  type Logger,
} from './logger.js';
import { Pacer, realTimers } from '../pipeline/pacer.js';

/** Options of start() that are not configuration. */
interface StartHooks extends AppHooks {
  /** Write one JSON log line per request at config.logLevel: `true` for stdout, or a destination. */
  readonly log?: boolean | LogDestination;
  /**
   * Runs the request path hot while the server is idle after it starts (see warmPath.ts): `npm start` does, so the
   * first burst of a load test meets optimised code. Off by default for servers started from code (tests start
   * hundreds).
   */
  readonly warmPath?: boolean;
}

/** A running mock: its base URL, its logger when logging, and two ways to stop it. */
export interface RunningMock extends MockApp {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  readonly logger: Logger | undefined;
  /** Closes every connection at once. */
  close(): Promise<void>;
  /**
   * Settles when the work the server does while idle after it starts is over (the tokenizer encodings loaded, and
   * with `warmPath` the request path run hot), or the server has closed; with how many requests the warm-up sent.
   */
  readonly warmed: Promise<{ readonly requests: number }>;
  /**
   * Stops accepting connections, closes idle ones, lets requests in flight finish and open streams
   * run to their end without pacing; whatever is still open after `graceMs` is closed.
   */
  shutdown(graceMs?: number): Promise<void>;
}

/** How often Node checks the header and request timeouts: often enough to enforce them within a second. */
const checkingInterval = (timeoutMs: number) => Math.max(10, Math.min(1000, Math.floor(timeoutMs / 4)));

// Connections that may wait to be accepted. Node accepts one connection per turn of its event loop, so a
// load test that opens a thousand in a second, against a server busy with as many streams, fills Node's
// default queue of 511; a connection that finds it full is dropped and retried by the client's kernel a
// second later, a second added to its time to first token. The kernel caps it (net.core.somaxconn).
const LISTEN_BACKLOG = 4096;

// How long start waits for shared state (Redis) to answer before listening anyway.
const STATE_CONNECT_WAIT_MS = 3000;

/** Starts the mock on the configured host and port (0 picks a free port); resolves once it listens. */
export async function start(input: ConfigInput = {}, hooks: StartHooks = {}): Promise<RunningMock> {
  const stopping = new AbortController();
  // The clock of the streams and of the linger time of unread bodies: the process's own, or a test's.
  const clock = hooks.streamTimers ?? realTimers;
  // The logger needs the resolved configuration (level, keys to scrub), which createApp makes: the
  // hooks given to createApp call through to it once it exists.
  let logger: Logger | undefined;
  let logRequest: RequestObserver | undefined;
  let logError: ErrorSink | undefined;
  const logHooks: AppHooks = hooks.log
    ? {
        observers: [...(hooks.observers ?? []), (record) => logRequest?.(record)],
        report: hooks.report ?? ((err, where) => logError?.(err, where)),
      }
    : {};
  // Lines the destination had to drop (it counts them when it can: stdout does) are shown in /__health.
  let destination: LogDestination | undefined;
  const logDropped = hooks.log ? () => (destination as { dropped?: unknown } | undefined)?.dropped : undefined;
  const mock = createApp(input, {
    ...hooks,
    ...logHooks,
    ...(logDropped ? { logDropped } : {}),
    streamTimers: new Pacer(clock, stopping.signal),
  });
  const { timeouts } = mock.config;
  if (hooks.log) {
    destination = hooks.log === true ? stdoutDestination() : hooks.log;
    logger = createLogger(mock.config, destination);
    logRequest = requestLogger(logger, mock.services.limits.records, mock.config);
    logError = errorLogger(logger, mock.services.limits.records);
  }

  // Node refuses a header timeout longer than the request timeout; the request timeout covers both.
  const headersTimeout = Math.min(timeouts.headersMs, timeouts.requestMs);
  const handler = mock.handler;
  const server = http.createServer(
    {
      requestTimeout: timeouts.requestMs,
      headersTimeout,
      keepAliveTimeout: timeouts.keepAliveMs,
      connectionsCheckingInterval: checkingInterval(headersTimeout),
      // A request without Host is refused by the app, in the envelope and recorded (pipeline/route.ts), not with Node's
      // bare 400.
      requireHostHeader: false,
    },
    onRequest,
  );
  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    tracker.request(req, res);
    void handler(req, res);
  }
  // With these listeners, Node neither sends 100 Continue at once nor answers another expectation with a bare 417: the
  // app decides (pipeline/route.ts, pipeline/parseBody.ts), so a body over the limit is refused before it is sent.
  server.on('checkContinue', onRequest);
  server.on('checkExpectation', onRequest);
  const tracker = new ConnectionTracker(
    server,
    timeouts.keepAliveMs,
    mock.services.limits.messages,
    (info) => logger?.info({ status: info.status, errorCode: info.code, reason: info.reason }, 'client error'),
    clock,
    timeouts.streamMaxMs,
  );
  const { state } = mock.services;
  try {
    // Shared state gets a moment to connect, so the first requests need not be 503s (it keeps trying after).
    await state.ready?.(STATE_CONNECT_WAIT_MS);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port: mock.config.port, host: mock.config.host, backlog: LISTEN_BACKLOG }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await state.close();
    throw err;
  }
  // Loads the chat encodings while the server is idle, so the first chat request does not pay for them; then, when
  // asked, runs the request path hot.
  const warm = hooks.warmPath ? warmPathSteps() : undefined;
  const warmed = runWhileIdle(server, undefined, [...loadSteps(), ...(warm?.steps ?? [])], warm?.close).then(() => ({
    requests: warm?.statuses.length ?? 0,
  }));
  const { port } = server.address() as AddressInfo;
  const host = mock.config.host.includes(':') ? `[${mock.config.host}]` : mock.config.host;

  let stopped: Promise<void> | undefined;
  const shutdown = (graceMs = timeouts.shutdownGraceMs) =>
    (stopped ??= new Promise<void>((resolve) => {
      const deadline = setTimeout(() => tracker.closeAll(), graceMs);
      server.close(() => {
        clearTimeout(deadline);
        void state.close().then(resolve);
      });
      tracker.beginShutdown();
      stopping.abort();
    }).then(async () => {
      // The relay's cassette writes in flight, then its violations report.
      const written = await mock.relay?.close().catch((err: unknown) => {
        logger?.error({ err }, 'could not write the violations report');
        return [];
      });
      if (written?.length) logger?.info({ files: written }, 'violations report written');
    }));
  return {
    ...mock,
    url: `http://${host}:${port}`,
    port,
    server,
    logger,
    shutdown,
    warmed,
    close: () => {
      const done = shutdown(0);
      tracker.closeAll();
      return done;
    },
  };
}
