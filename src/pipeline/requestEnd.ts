import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { StreamStats } from '../domain/lateness.js';

import { QUEUED } from '../lib/symbols.js';

// The responses of a connection still queued behind the one it is writing (HTTP/1.1 pipelining), kept on the
// socket itself with one 'close' listener for all of them: a listener per response would pass Node's limit of ten
// with the eleventh pipelined request.
type Connection = Duplex & { [QUEUED]?: Set<RequestEnd> };

function connectionClosed(this: Connection): void {
  const queued = this[QUEUED];
  if (!queued) return;
  this[QUEUED] = undefined;
  for (const end of queued) end.connectionClosed();
}

/**
 * The end of one request, owned in one place. Whatever ends a request (its answer written, a fault that cuts it,
 * the stream time limit, the client gone before or after the head, a request pipelined behind another whose
 * client left, the server shutting down), its waits learn it from here (`closed`, `onClose`), and `finish`, called
 * once from the end of the request's path (endRequest), gives back the stream count it took.
 *
 * Node tells a response 'close' when its connection closes only while the response holds the connection. A
 * response pipelined behind another is queued in Node with no socket, and on Node 20 to 24 it is told nothing when
 * the client leaves (Node 26 destroys the queued ones); its request's 'close' came and went when its body was read.
 * So the connection of a response that starts queued is watched here: when it closes, the response is destroyed and
 * its waits are told, as they are for one that held the connection.
 */
export class RequestEnd {
  private ended = false;
  /** What `onClose` was given: one function (a request's usual one wait at a time), or several. */
  private listeners: (() => void) | (() => void)[] | undefined = undefined;
  private watching = false;
  private queuedOn: Connection | undefined = undefined;
  private streams: StreamStats | undefined = undefined;
  private finished = false;

  constructor(private readonly res: ServerResponse) {
    if (res.socket) return;
    // Queued behind another response (or a response without a connection, as in tests): watch its connection.
    const connection = (res.req as { socket?: Connection | null } | undefined)?.socket;
    if (!connection) return;
    if (connection.destroyed) {
      this.ended = true;
      return;
    }
    let queued = connection[QUEUED];
    if (!queued) {
      connection[QUEUED] = queued = new Set();
      connection.once('close', connectionClosed);
    }
    queued.add(this);
    this.queuedOn = connection;
    this.watch();
  }

  /** Whether the response is over: written and closed, or its client gone. Nothing more is sent once it is. */
  get closed(): boolean {
    return this.ended || this.res.destroyed;
  }

  /**
   * Calls `fn` once when the response closes: its answer written, or its client gone (the response's
   * `writableFinished` tells which). Check `closed` first: a response that has closed already calls nothing.
   */
  onClose(fn: () => void): void {
    const listeners = this.listeners;
    if (listeners === undefined) this.listeners = fn;
    else if (typeof listeners === 'function') this.listeners = [listeners, fn];
    else listeners.push(fn);
    this.watch();
  }

  /** Takes back a call `onClose` asked for. */
  offClose(fn: () => void): void {
    const listeners = this.listeners;
    if (listeners === fn) this.listeners = undefined;
    else if (typeof listeners === 'object') {
      const at = listeners.indexOf(fn);
      if (at >= 0) listeners.splice(at, 1);
    }
  }

  /** How many waits are still told of the close (none once the request's path is over). */
  get waiting(): number {
    const listeners = this.listeners;
    return listeners === undefined ? 0 : typeof listeners === 'function' ? 1 : listeners.length;
  }

  /** Counts the request's stream as open in `stats` until `finish`. */
  countStream(stats: StreamStats): void {
    if (this.streams) return;
    this.streams = stats;
    stats.open++;
    stats.started++;
  }

  /** The request's path is over: the stream it counted is closed, and nothing of it is watched any more. Once. */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.streams) this.streams.open--;
    this.unqueue();
    this.listeners = undefined;
  }

  /** The connection of a response still queued behind another closed: the response will never be sent. */
  connectionClosed(): void {
    this.queuedOn = undefined;
    // Destroyed, a response takes no more writes (each fails quietly) instead of buffering for a socket that is gone.
    if (!this.res.destroyed) this.res.destroy();
    this.close();
  }

  private watch(): void {
    if (this.watching) return;
    this.watching = true;
    // `on`, and taken off by `close`: `once` would wrap it in an object and a function of its own, per request.
    this.res.on('close', this.close);
  }

  private readonly close = (): void => {
    if (this.watching) this.res.off('close', this.close);
    if (this.ended) return;
    this.ended = true;
    this.unqueue();
    const listeners = this.listeners;
    this.listeners = undefined;
    if (typeof listeners === 'function') listeners();
    else if (listeners) for (const fn of listeners) fn();
  };

  private unqueue(): void {
    const connection = this.queuedOn;
    if (!connection) return;
    this.queuedOn = undefined;
    connection[QUEUED]?.delete(this);
  }
}

/** The request's end: serve makes it as the request arrives; one made here, on first use, serves a step run on its own. */
export function endOf(state: { end?: RequestEnd }, res: ServerResponse): RequestEnd {
  return (state.end ??= new RequestEnd(res));
}
