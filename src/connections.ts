import { randomBytes } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, type ErrorTemplate } from './errors.js';

/** What the tracker reports about a connection answered outside Koa (bad HTTP, timeouts). */
export interface ClientErrorInfo {
  readonly status: number;
  readonly code: string;
  readonly reason: string;
}

interface InFlight {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

const template = (status: number, code: string, message: string): ErrorTemplate => ({ status, type: 'invalid_request_error', code, message });

/** The answer to an HTTP-level error that Node's parser or timers raise before Koa sees a request. */
export function clientErrorTemplate(err: Error & { code?: string; reason?: string }): ErrorTemplate {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return template(408, 'request_timeout', 'The request (headers and body) did not arrive in time; the connection is closed.');
    case 'HPE_HEADER_OVERFLOW':
      return template(431, 'request_header_fields_too_large', 'The request headers are too large.');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return template(413, 'request_too_large', 'The chunk extensions of the request body are too large.');
    case 'CONNECT':
      return template(405, 'method_not_allowed', 'CONNECT is not supported: this server is not a proxy.');
    case 'HPE_INVALID_EOF_STATE':
      return template(400, 'incomplete_request', 'The connection ended before the request was complete.');
    default:
      return template(400, 'malformed_request', `The request is not valid HTTP/1.1${err.reason ? `: ${err.reason.slice(0, 80)}` : ''}.`);
  }
}

/** A complete HTTP/1.1 response in the error envelope, written straight to a socket. */
export function rawErrorResponse(t: ErrorTemplate): string {
  const body = JSON.stringify(new ApiError(t).toBody());
  return [
    `HTTP/1.1 ${t.status} ${STATUS_CODES[t.status] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `x-request-id: req_${randomBytes(16).toString('hex')}`,
    'x-content-type-options: nosniff',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Keeps track of a server's connections and their in-flight responses, so that HTTP-level errors get
 * an envelope answer, an unread request body is discarded for a bounded time only, and shutdown can
 * tell idle connections from busy ones.
 */
export class ConnectionTracker {
  private readonly sockets = new Set<Duplex>();
  private readonly inflight = new Map<Duplex, InFlight>();
  private closing = false;

  constructor(
    private readonly server: Server,
    /** How long a connection may go on sending a body nobody reads after its answer was sent. */
    private readonly lingerMs: number,
    private readonly onClientError: (info: ClientErrorInfo) => void = () => {},
  ) {
    server.on('connection', (socket: Duplex) => {
      this.sockets.add(socket);
      socket.once('close', () => {
        this.sockets.delete(socket);
        this.inflight.delete(socket);
      });
    });
    server.on('clientError', (err: Error & { code?: string; reason?: string }, socket: Duplex) => this.clientError(err, socket));
    // Node hands CONNECT (proxy tunnels) to this event instead of the app; without it, no answer at all.
    server.on('connect', (_req: IncomingMessage, socket: Duplex) => this.answer(Object.assign(new Error('CONNECT'), { code: 'CONNECT' }), socket, false));
  }

  /** Registers a request before the app handles it. */
  request(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    const entry = { req, res };
    this.inflight.set(socket, entry);
    if (this.closing) res.setHeader('Connection', 'close');
    res.once('close', () => {
      if (this.inflight.get(socket) === entry) this.inflight.delete(socket);
      if (!req.complete && !socket.destroyed) this.discardBody(req, socket);
      if (this.closing) setImmediate(() => this.closeIdle());
    });
  }

  // An early answer (401, 413, 415) leaves the body unread: it is discarded as it arrives, and a client
  // that does not finish sending it within the linger time loses the connection.
  private discardBody(req: IncomingMessage, socket: Duplex): void {
    const timer = setTimeout(() => socket.destroy(), this.lingerMs);
    timer.unref();
    // Both listeners go once either fires: a keep-alive socket serves many requests, and a listener
    // left per request would pile up on it.
    const done = () => {
      clearTimeout(timer);
      req.off('end', done);
      socket.off('close', done);
    };
    req.once('end', done);
    socket.once('close', done);
    req.resume();
  }

  private clientError(err: Error & { code?: string; reason?: string }, socket: Duplex): void {
    const busy = this.inflight.get(socket);
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // A complete request still being answered (pipelined garbage after it) gets its answer first.
    if (busy && busy.req.complete && !busy.res.writableFinished) {
      busy.res.once('close', () => this.answer(err, socket, !busy.res.writableFinished));
      return;
    }
    this.answer(err, socket, busy !== undefined && busy.res.headersSent && !busy.res.writableFinished);
  }

  private answer(err: Error & { code?: string; reason?: string }, socket: Duplex, midResponse: boolean): void {
    if (midResponse || !socket.writable) {
      socket.destroy(); // bytes of another answer went out already: an error text would corrupt it
      return;
    }
    const t = clientErrorTemplate(err);
    this.onClientError({ status: t.status, code: t.code ?? '', reason: err.code ?? 'unknown' });
    socket.end(rawErrorResponse(t));
    const timer = setTimeout(() => socket.destroy(), Math.min(this.lingerMs, 1000));
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  }

  /** Stops taking new connections; connections with nothing in flight are closed now, the rest as they finish. */
  beginShutdown(): void {
    this.closing = true;
    for (const { res } of this.inflight.values()) if (!res.headersSent) res.setHeader('Connection', 'close');
    this.closeIdle();
  }

  /** Closes every connection that has no response in progress (idle keep-alive, half-sent headers). */
  closeIdle(): void {
    for (const socket of this.sockets) if (!this.inflight.has(socket)) socket.destroy();
  }

  /** Closes every connection at once. */
  closeAll(): void {
    for (const socket of this.sockets) socket.destroy();
  }
}
