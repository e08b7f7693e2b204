import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { loadSteps } from './tokenizer.js';

/** How long the server must have been without requests before a loading step runs. */
const IDLE_MS = 100;

/** One piece of warm-up work; a promise keeps the next step (and the check for idleness) waiting until it settles. */
export type WarmStep = () => unknown;

/**
 * Runs `steps` in the background while the server is idle, so the first requests do not pay for what they do
 * (the tokenizer encodings, loaded by default) and no request waits behind the whole of it: a step runs only
 * after `idleMs` without requests, and a request that arrives during one waits for that step alone.
 * Resolves when every step has run or the server has closed; `done`, when given, runs then either way.
 */
export function runWhileIdle(
  server: Server,
  idleMs = IDLE_MS,
  steps: WarmStep[] = loadSteps(),
  done?: () => void | Promise<void>,
): Promise<void> {
  let inFlight = 0;
  let last = performance.now();
  const onRequest = (_req: IncomingMessage, res: ServerResponse) => {
    inFlight++;
    last = performance.now();
    res.once('close', () => {
      inFlight--;
      last = performance.now();
    });
  };
  server.on('request', onRequest);
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      server.off('request', onRequest);
      server.off('close', stop);
      void Promise.resolve()
        .then(done)
        .catch(() => {})
        .then(() => resolve());
    };
    const later = (ms: number) => (timer = setTimeout(tick, ms));
    const next = () => {
      if (stopped) return;
      if (steps.length === 0) return stop();
      later(0);
    };
    const tick = () => {
      const quiet = performance.now() - last;
      if (inFlight > 0 || quiet < idleMs) return later(inFlight > 0 ? idleMs : idleMs - quiet);
      let running: unknown;
      try {
        running = steps.shift()!();
      } catch {
        // A broken encoding is reported by the request that needs it, through the usual error handling.
      }
      if (running instanceof Promise) void running.catch(() => {}).then(next);
      else next();
    };
    server.once('close', stop);
    later(idleMs);
  });
}
