// Stream timers on a clock of their own, for streams that run at once but keep their schedule.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { StreamTimers } from '../../src/pipeline/pacer.js';

/** Stream timers whose clock moves only from one due timer to the next; `pending` counts the timers not yet run. */
export interface VirtualTimers extends StreamTimers {
  readonly pending: number;
  /** Stops the clock: no timer runs until `release`. */
  hold(): void;
  release(): void;
}

/**
 * Stream timers on a virtual clock: each wait ends as soon as nothing earlier is due, one a turn of the event
 * loop (so the sockets are served between them), and the clock then reads the time it was due at. A stream
 * paced for seconds runs in milliseconds, and its times (`now()`) are the exact ones its schedule says.
 * With `quiet`, the clock moves only while it returns true (a client has read all that was written to it,
 * so the times it reads on this clock are the times the bytes were sent); `hold` stops it until `release`.
 */
export function virtualTimers(quiet: () => boolean = () => true): VirtualTimers {
  let now = 0;
  let ids = 0;
  let running = false;
  let held = false;
  const due = new Map<number, { at: number; fn: () => void }>();
  const runNext = () => {
    running = false;
    if (held) return;
    if (!quiet()) return schedule();
    let next: [number, { at: number; fn: () => void }] | undefined;
    // A Map keeps the order timers were set in: of two due at once, the first set runs first.
    for (const entry of due) if (!next || entry[1].at < next[1].at) next = entry;
    if (!next) return;
    due.delete(next[0]);
    now = Math.max(now, next[1].at);
    next[1].fn();
    schedule();
  };
  const schedule = () => {
    if (running || held || due.size === 0) return;
    running = true;
    setImmediate(runNext);
  };
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = ++ids;
      due.set(id, { at: now + ms, fn });
      schedule();
      return id;
    },
    clearTimeout: (handle) => void due.delete(handle as number),
    get pending() {
      return due.size;
    },
    hold: () => void (held = true),
    release() {
      held = false;
      schedule();
    },
  };
}

/** Stream timers on a clock only the test moves: `advance` runs the timers that fall due, in order. */
export interface ManualTimers extends StreamTimers {
  readonly pending: number;
  /** Moves the clock `ms` on, running each timer due by then at its own time (and those they set, if due). */
  advance(ms: number): void;
}

export function manualTimers(): ManualTimers {
  let now = 0;
  let ids = 0;
  const due = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const id = ++ids;
      due.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimeout: (handle) => void due.delete(handle as number),
    get pending() {
      return due.size;
    },
    advance(ms) {
      const until = now + ms;
      for (;;) {
        let next: [number, { at: number; fn: () => void }] | undefined;
        for (const entry of due) if (entry[1].at <= until && (!next || entry[1].at < next[1].at)) next = entry;
        if (!next) break;
        due.delete(next[0]);
        now = Math.max(now, next[1].at);
        next[1].fn();
      }
      now = until;
    },
  };
}

/** The connections between a server and the test's own clients: whether every byte sent either way has been read. */
export interface Wire {
  /** Follows a client's connection (an http.request's socket) until it closes. */
  track(socket: Socket): void;
  /** True when every followed connection is accepted and has nothing in flight either way. */
  quiet(): boolean;
}

/** The wire between `server` and the clients given to `track`; connections not tracked (an admin call) do not count. */
export function wireOf(server: Server): Wire {
  // The server's end of each connection, by the client's port.
  const ends = new Map<number, Socket>();
  server.on('connection', (socket: Socket) => {
    const port = socket.remotePort!;
    ends.set(port, socket);
    socket.once('close', () => ends.get(port) === socket && ends.delete(port));
  });
  const clients = new Set<Socket>();
  return {
    track(socket) {
      clients.add(socket);
      socket.once('close', () => clients.delete(socket));
    },
    quiet() {
      for (const client of clients) {
        const end = client.localPort === undefined ? undefined : ends.get(client.localPort);
        if (!end || client.bytesRead < end.bytesWritten || end.bytesRead < client.bytesWritten) return false;
      }
      return true;
    },
  };
}

/**
 * Stream timers the test moves by hand: the clock reads `time`, which moves only when the test says so (fire,
 * advance); each wait is kept in `pending` with when it is due, and what it asked for is in `requested`.
 */
export class HandTimers implements StreamTimers {
  readonly pending = new Map<number, { fn: () => void; at: number; ms: number }>();
  /** Each wait's length in ms, in the order asked for. */
  readonly requested: number[] = [];
  private ids = 0;

  /** `stopping`: as the server's timers carry it, aborted at shutdown. */
  constructor(
    public time = 0,
    readonly stopping?: AbortSignal,
  ) {}

  now = (): number => this.time;
  setTimeout = (fn: () => void, ms: number): unknown => {
    const id = ++this.ids;
    this.pending.set(id, { fn, at: this.time + ms, ms });
    this.requested.push(ms);
    return id;
  };
  clearTimeout = (handle: unknown): void => void this.pending.delete(handle as number);

  /** How many waits were asked for. */
  get sets(): number {
    return this.requested.length;
  }

  /** Moves the clock to the earliest wait (plus `late` ms) and runs it. */
  fire(late = 0): void {
    const [id, t] = [...this.pending].sort((a, b) => a[1].at - b[1].at)[0]!;
    this.pending.delete(id);
    this.time = t.at + late;
    t.fn();
  }

  /** Moves the clock to `to`, running every wait due by then, earliest first. */
  advance(to: number): void {
    for (;;) {
      const next = [...this.pending].sort((a, b) => a[1].at - b[1].at)[0];
      if (!next || next[1].at > to) break;
      this.pending.delete(next[0]);
      this.time = Math.max(this.time, next[1].at);
      next[1].fn();
    }
    this.time = to;
  }

  /** Runs every wait pending now, whenever due, without moving the clock (the waits they set stay for the next call). */
  runAll(): void {
    const due = [...this.pending.values()];
    this.pending.clear();
    for (const t of due) t.fn();
  }
}

/** The process's timers, remembering which of their handles are still pending (`live`). */
export class TrackedTimers implements StreamTimers {
  readonly live = new Set<unknown>();
  now = (): number => performance.now();
  setTimeout = (fn: () => void, ms: number): unknown => {
    const h = setTimeout(() => {
      this.live.delete(h);
      fn();
    }, ms);
    this.live.add(h);
    return h;
  };
  clearTimeout = (handle: unknown): void => {
    clearTimeout(handle as NodeJS.Timeout);
    this.live.delete(handle);
  };
  setImmediate = (fn: () => void): unknown => {
    const h = setImmediate(() => {
      this.live.delete(h);
      fn();
    });
    this.live.add(h);
    return h;
  };
  clearImmediate = (handle: unknown): void => {
    clearImmediate(handle as NodeJS.Immediate);
    this.live.delete(handle);
  };
}
