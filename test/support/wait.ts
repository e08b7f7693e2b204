// Waiting in tests: for an event or a condition, never for a length of time.
import type { EventEmitter } from 'node:events';

/** One turn of the event loop: what is due now (I/O callbacks, resolved promises, immediates before it) has run. */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * How long a wait may stay open before it fails. Not a measure of anything: it only turns a hang into a
 * failure that says what was awaited, well before the test runner's own patience (or a CI job's) runs out.
 */
const HANG_MS = 30_000;

/** Where a wait looks again, and what ends it early. */
export interface WaitOptions {
  /** Look again on each of these events (output from a child, data on a socket); else after each turn of the timers. */
  readonly on?: readonly [EventEmitter, string];
  /** Fail at once on this event (a child that exits, a socket that closes): what was awaited can no longer come. */
  readonly failOn?: readonly [EventEmitter, string];
}

/**
 * Resolves with the first value of `check` that is not undefined, null or false: looked at at once, then on
 * each `on` event, or again after each turn of the timers when no event tells when to look (a journal
 * written in the background, a server that reconnects). `what` names the condition in the failure (a function
 * when the failure should show the state it ended in).
 */
export function waitFor<T>(
  what: string | (() => string),
  check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  opts: WaitOptions = {},
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    let again: NodeJS.Timeout | undefined;
    let looking = false;
    let missed = false;
    const finish = (err: Error | undefined, value?: T) => {
      if (done) return;
      done = true;
      clearTimeout(hang);
      clearTimeout(again);
      if (opts.on) opts.on[0].off(opts.on[1], look);
      if (opts.failOn) opts.failOn[0].off(opts.failOn[1], gone);
      if (err) reject(err);
      else resolve(value as T);
    };
    const named = () => (typeof what === 'string' ? what : what());
    const gone = () => finish(new Error(`waiting for ${named()}: ${opts.failOn![1]} came first`));
    async function look(): Promise<void> {
      if (done) return;
      // An event that comes while an async check runs is not lost: the check runs again once it settles.
      if (looking) return void (missed = true);
      looking = true;
      try {
        const value = await check();
        if (value !== undefined && value !== null && value !== false) return finish(undefined, value);
      } catch (err) {
        return finish(err as Error);
      } finally {
        looking = false;
      }
      if (missed) {
        missed = false;
        return look();
      }
      if (!opts.on && !done) again = setTimeout(() => void look(), 1);
    }
    const hang = setTimeout(() => finish(new Error(`still waiting for ${named()} after ${HANG_MS / 1000} s`)), HANG_MS);
    if (opts.on) opts.on[0].on(opts.on[1], look);
    if (opts.failOn) opts.failOn[0].once(opts.failOn[1], gone);
    void look();
  });
}
