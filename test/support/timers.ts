// Stream timers on a clock of their own, for streams that run at once but keep their schedule.
import type { StreamTimers } from '../../src/pipeline/pacer.js';

/** Stream timers whose clock moves only from one due timer to the next; `pending` counts the timers not yet run. */
export interface VirtualTimers extends StreamTimers {
  readonly pending: number;
}

/**
 * Stream timers on a virtual clock: each wait ends as soon as nothing earlier is due, one a turn of the event
 * loop (so the sockets are served between them), and the clock then reads the time it was due at. A stream
 * paced for seconds runs in milliseconds, and its times (`now()`) are the exact ones its schedule says.
 */
export function virtualTimers(): VirtualTimers {
  let now = 0;
  let ids = 0;
  let running = false;
  const due = new Map<number, { at: number; fn: () => void }>();
  const runNext = () => {
    running = false;
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
    if (running || due.size === 0) return;
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
  };
}
