import { MAX_TIMER_MS } from '../lib/timers.js';

/** Time as the rate limiter and the delay faults see it; tests replace `now` and `sleep` to need no waiting. */
export interface Clock {
  /** Milliseconds since an arbitrary origin (wall clock by default). */
  now(): number;
  /** Resolves after `ms` milliseconds, or at once when `signal` aborts (never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * A clock on real time; each app gets its own object, so replacing its methods affects that app only. A sleep longer
 * than a timer can wait (MAX_TIMER_MS) waits in turns, never with a timer that would overflow and fire at once.
 */
export function systemClock(): Clock {
  return {
    now: () => Date.now(),
    sleep: (ms, signal) =>
      new Promise((resolve) => {
        if (signal?.aborted) return resolve();
        let left = ms;
        let timer: NodeJS.Timeout | undefined;
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const wait = () => {
          const now = Math.min(left, MAX_TIMER_MS);
          left -= now;
          timer = setTimeout(left > 0 ? wait : done, now);
        };
        wait();
        signal?.addEventListener('abort', done, { once: true });
      }),
  };
}
