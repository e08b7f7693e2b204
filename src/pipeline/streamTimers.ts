import type { StreamTimers } from './sse.js';

interface Pending {
  timer?: NodeJS.Timeout;
  immediate?: NodeJS.Immediate;
  readonly fn: () => void;
}

const cancel = (p: Pending) => {
  if (p.timer) clearTimeout(p.timer);
  if (p.immediate) clearImmediate(p.immediate);
};

/**
 * Stream timers that run out when the server shuts down: from then on every wait (time to first
 * token, pacing, a stall) ends at once, so an open stream finishes within the shutdown grace period
 * instead of at its paced speed; `stopping` tells the writer why a stall ended.
 */
export function shutdownTimers(signal: AbortSignal): StreamTimers {
  const pending = new Set<Pending>();
  const run = (p: Pending) => {
    pending.delete(p);
    p.fn();
  };
  signal.addEventListener(
    'abort',
    () => {
      for (const p of pending) {
        cancel(p);
        p.timer = undefined;
        p.immediate = setImmediate(run, p);
      }
    },
    { once: true },
  );
  return {
    stopping: signal,
    now: () => performance.now(),
    setTimeout(fn, ms) {
      const p: Pending = { fn };
      if (signal.aborted) p.immediate = setImmediate(run, p);
      else p.timer = setTimeout(run, ms, p);
      pending.add(p);
      return p;
    },
    clearTimeout(handle) {
      cancel(handle as Pending);
      pending.delete(handle as Pending);
    },
  };
}
