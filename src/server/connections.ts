import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { http } from '../lib/cjs.js';
import { closeAfter } from '../lib/internals.js';
import type { Duplex } from 'node:stream';
import { ApiError, ERRORS, type ErrorTemplate } from '../contract/errors.js';
import type { Limits } from '../domain/limits.js';
import { realTimers, type StreamTimers } from '../pipeline/pacer.js';
import { BODY_READ, IN_FLIGHT, RAW_ANSWER, REQUEST_ID } from '../lib/symbols.js';
import { requestIdFor } from '../pipeline/requestContext.js';

/** What the tracker reports about a connection answered outside Koa (bad HTTP, timeouts). */
interface ClientErrorInfo {
  readonly status: number;
  readonly code: string;
  readonly reason: string;
}

/** The bounds of what a raw answer quotes: the messages fields of fixtures/limits.json (services.limits). */
type RawAnswerBounds = Pick<Limits['messages'], 'maxReasonChars'>;

/**
 * The answer to an HTTP-level error that Node's parser or timers raise before Koa sees a request: a row of
 * the error table. A request Node could not parse quotes the parser's reason, up to messages.maxReasonChars.
 */
export function clientErrorTemplate(
  err: Error & { code?: string; reason?: string },
  bounds: RawAnswerBounds,
): ErrorTemplate {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return ERRORS.REQUEST_TIMEOUT;
    case 'HPE_HEADER_OVERFLOW':
      return ERRORS.HEADERS_TOO_LARGE;
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return ERRORS.CHUNK_EXTENSIONS_TOO_LARGE;
    case 'CONNECT':
      return ERRORS.CONNECT_NOT_ALLOWED;
    case 'HPE_INVALID_EOF_STATE':
      return ERRORS.INCOMPLETE_REQUEST;
    default:
      if (!err.reason) return ERRORS.MALFORMED_REQUEST;
      return {
        ...ERRORS.MALFORMED_REQUEST,
        message: `${ERRORS.MALFORMED_REQUEST.message.slice(0, -1)}: ${err.reason.slice(0, bounds.maxReasonChars)}.`,
      };
  }
}

/**
 * A complete HTTP/1.1 response in the error envelope, written straight to a socket. Its request id is that of the
 * request whose head was parsed, else made as every other answer's is (requestIdFor).
 */
export function rawErrorResponse(t: ErrorTemplate, requestId = requestIdFor(undefined)): string {
  const body = JSON.stringify(new ApiError(t).toBody());
  return [
    `HTTP/1.1 ${t.status} ${http.STATUS_CODES[t.status] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    'x-content-type-options: nosniff',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

// The response in progress on a connection is kept on the socket itself (lib/symbols.ts).
type Tracked = Duplex & { [IN_FLIGHT]?: ServerResponse | undefined };
// A response the tracker may answer for: its request's id (app/serve.ts), and the answer written, for its record.
type Answerable = ServerResponse & { [REQUEST_ID]?: string; [RAW_ANSWER]?: ErrorTemplate };

/**
 * Keeps track of a server's connections and their in-flight responses, so that HTTP-level errors get
 * an envelope answer, an unread request body is discarded for a bounded time only, and shutdown can
 * tell idle connections from busy ones.
 */
export class ConnectionTracker {
  private readonly sockets = new Set<Duplex>();
  private closing = false;
  /** Requests whose unread body is being discarded, with the time (on the clock) it must end by. */
  private readonly lingering = new Map<IncomingMessage, number>();
  private sweeper: unknown;
  /** Connections whose answer's bytes wait for the client to read them, with when they were first seen waiting. */
  private readonly unread = new Map<Duplex, number>();
  private sendWatch: unknown;

  constructor(
    private readonly server: Server,
    /** How long a connection may go on sending a body nobody reads after its answer was sent. */
    private readonly lingerMs: number,
    /** What the answers written to the socket quote (messages of fixtures/limits.json, from services.limits). */
    private readonly bounds: RawAnswerBounds,
    private readonly onClientError: (info: ClientErrorInfo) => void = () => {},
    /** The clock of the linger time and its timers: the process's own, unless a test brings one it moves itself. */
    private readonly clock: StreamTimers = realTimers,
    /**
     * How long an answer's bytes may wait for a client that does not read them (the stream time limit) before its
     * connection is closed: a stream's writer ends it by then, and a plain answer nobody reads (a 10 MB journal)
     * would otherwise hold its memory and connection for ever, as Node sets no limit on sending.
     */
    private readonly sendMs = Infinity,
  ) {
    server.on('connection', (socket: Duplex) => {
      (socket as Tracked)[IN_FLIGHT] = undefined; // the property every connection has, from the start
      this.sockets.add(socket);
      socket.once('close', () => {
        this.sockets.delete(socket);
        this.unread.delete(socket);
        (socket as Tracked)[IN_FLIGHT] = undefined;
      });
      if (this.sendMs < Infinity) this.sendWatch ??= this.nextSendLook();
    });
    server.on('clientError', (err: Error & { code?: string; reason?: string }, socket: Duplex) =>
      this.clientError(err, socket),
    );
    // Node hands CONNECT (proxy tunnels) to this event instead of the app; without it, no answer at all.
    server.on('connect', (_req: IncomingMessage, socket: Duplex) =>
      this.answer(Object.assign(new Error('CONNECT'), { code: 'CONNECT' }), socket, false),
    );
  }

  /** Registers a request before the app handles it. */
  request(req: IncomingMessage, res: ServerResponse): void {
    (req.socket as Tracked)[IN_FLIGHT] = res;
    if (this.closing) closeAfter(res);
    // One listener shared by every response (it is called with the response as `this`): nothing to
    // allocate per request.
    res.on('close', this.responseClosed);
  }

  private readonly responseClosed = ((tracker: ConnectionTracker) =>
    function responseClosed(this: ServerResponse) {
      const { req } = this;
      const socket = req.socket;
      if ((socket as Tracked)[IN_FLIGHT] === this) (socket as Tracked)[IN_FLIGHT] = undefined;
      if (!req.complete && !(req as IncomingMessage & { [BODY_READ]?: boolean })[BODY_READ] && !socket.destroyed)
        tracker.discardBody(req);
      if (tracker.closing) setImmediate(() => tracker.closeIdle());
    })(this);

  // An early answer (401, 413, 415) leaves the body unread: it is discarded as it arrives, and a client
  // that does not finish sending it within the linger time loses the connection. One timer looks
  // after every such request, and one listener shared by all of them: a 401 under load costs no
  // timer and no closure of its own.
  private discardBody(req: IncomingMessage): void {
    this.lingering.set(req, this.clock.now() + this.lingerMs);
    req.on('end', this.bodyEnded);
    req.resume();
    this.sweeper ??= this.nextSweep();
  }

  /** The next look at the lingering requests: often enough to close each within a quarter of the linger time. */
  private nextSweep(): unknown {
    return this.later(this.sweep, Math.max(10, Math.min(1000, this.lingerMs / 4)));
  }

  /** Runs fn after ms on the clock; the wait does not keep the process alive. */
  private later(fn: () => void, ms: number): unknown {
    const handle = this.clock.setTimeout(fn, ms);
    (handle as { unref?: () => void }).unref?.();
    return handle;
  }

  private readonly bodyEnded = ((tracker: ConnectionTracker) =>
    function bodyEnded(this: IncomingMessage) {
      tracker.lingering.delete(this);
    })(this);

  /** Forgets requests whose body ended or whose connection closed; closes the connections past their time. */
  private readonly sweep = (): void => {
    const now = this.clock.now();
    for (const [req, deadline] of this.lingering) {
      if (req.complete || req.socket.destroyed) this.lingering.delete(req);
      else if (now >= deadline) {
        this.lingering.delete(req);
        req.socket.destroy();
      }
    }
    this.sweeper = this.lingering.size ? this.nextSweep() : undefined;
  };

  /** The next look at what waits to be sent: often enough to close a connection within a quarter of the send time. */
  private nextSendLook(): unknown {
    return this.later(this.lookAtSends, Math.max(10, Math.min(1000, this.sendMs / 4)));
  }

  /**
   * One timer for every connection: one whose bytes have waited for the client since a look `sendMs` ago or more,
   * without ever being all taken, is closed. Most connections have nothing waiting at a look and cost one read.
   */
  private readonly lookAtSends = (): void => {
    const now = this.clock.now();
    for (const socket of this.sockets) {
      if (socket.writableLength === 0) {
        if (this.unread.size) this.unread.delete(socket);
        continue;
      }
      const since = this.unread.get(socket);
      if (since === undefined) this.unread.set(socket, now);
      else if (now - since >= this.sendMs) {
        this.unread.delete(socket);
        socket.destroy();
      }
    }
    this.sendWatch = this.sockets.size ? this.nextSendLook() : undefined;
  };

  private clientError(err: Error & { code?: string; reason?: string }, socket: Duplex): void {
    const busy = (socket as Tracked)[IN_FLIGHT];
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // A complete request still being answered (pipelined garbage after it) gets its answer first.
    if (busy && busy.req.complete && !busy.writableFinished) {
      busy.once('close', () => this.answer(err, socket, !busy.writableFinished));
      return;
    }
    // A request whose head was parsed and whose body stopped coming or broke (a timeout, a bad chunk): the answer is its
    // own, with its id, and its record says what was sent.
    const unanswered = busy && !busy.req.complete && !busy.headersSent ? (busy as Answerable) : undefined;
    this.answer(err, socket, busy !== undefined && busy.headersSent && !busy.writableFinished, unanswered);
  }

  private answer(
    err: Error & { code?: string; reason?: string },
    socket: Duplex,
    midResponse: boolean,
    res?: Answerable,
  ): void {
    if (midResponse || !socket.writable) {
      socket.destroy(); // bytes of another answer went out already: an error text would corrupt it
      return;
    }
    const t = clientErrorTemplate(err, this.bounds);
    this.onClientError({ status: t.status, code: t.code ?? '', reason: err.code ?? 'unknown' });
    // Recorded once the kernel took it: a client that reset its connection (which Node may report as an early end of
    // the request) was sent nothing, and its record says 0. The request's path records after this, once the socket
    // closes.
    socket.write(rawErrorResponse(t, res?.[REQUEST_ID]), (failed) => {
      if (res && !failed) res[RAW_ANSWER] = t;
    });
    socket.end();
    const timer = this.later(() => socket.destroy(), Math.min(this.lingerMs, 1000));
    socket.once('close', () => this.clock.clearTimeout(timer));
  }

  /** Stops taking new connections; connections with nothing in flight are closed now, the rest as they finish. */
  beginShutdown(): void {
    this.closing = true;
    for (const socket of this.sockets) {
      const res = (socket as Tracked)[IN_FLIGHT];
      if (res && !res.headersSent) closeAfter(res);
    }
    this.closeIdle();
  }

  /** Closes every connection that has no response in progress (idle keep-alive, half-sent headers). */
  closeIdle(): void {
    for (const socket of this.sockets) if (!(socket as Tracked)[IN_FLIGHT]) socket.destroy();
  }

  /** Closes every connection at once. */
  closeAll(): void {
    for (const socket of this.sockets) socket.destroy();
  }
}
