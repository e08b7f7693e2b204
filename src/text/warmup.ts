import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { loadSteps } from './tokenizer.js';

/** How long the server must have been without requests before a loading step runs. */
const IDLE_MS = 100;

/**
 * Loads the tokenizer encodings in the background while the server is idle, so the first chat request
 * does not pay for them and no other request waits behind a whole load: a step runs only after
 * `idleMs` without requests, and a request that arrives during one waits for that step alone.
 * Resolves when every step has run or the server has closed.
 */
export function warmTokenizers(
  server: Server,
  idleMs = IDLE_MS,
  steps: Array<() => void> = loadSteps(),
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
    const stop = () => {
      clearTimeout(timer);
      server.off('request', onRequest);
      server.off('close', stop);
      resolve();
    };
    const later = (ms: number) => (timer = setTimeout(tick, ms));
    const tick = () => {
      const quiet = performance.now() - last;
      if (inFlight > 0 || quiet < idleMs) return later(inFlight > 0 ? idleMs : idleMs - quiet);
      try {
        steps.shift()!();
      } catch {
        // A broken encoding is reported by the request that needs it, through the usual error handling.
      }
      if (steps.length === 0) return stop();
      later(0);
    };
    server.once('close', stop);
    later(idleMs);
  });
}
