/** Time as the rate limiter and the delay faults see it; tests replace `now` and `sleep` to need no waiting. */
export interface Clock {
  /** Milliseconds since an arbitrary origin (wall clock by default). */
  now(): number;
  /** Resolves after `ms` milliseconds, or at once when `signal` aborts (never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** A clock on real time; each app gets its own object, so replacing its methods affects that app only. */
export function systemClock(): Clock {
  return {
    now: () => Date.now(),
    sleep: (ms, signal) =>
      new Promise((resolve) => {
        if (signal?.aborted) return resolve();
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener('abort', done, { once: true });
      }),
  };
}
