// Placeholders while the latency model is assembled: no profile in force, nothing running. Replaced by the
// control (control.ts) and the slots (slots.ts).
import type { LatencyControl, LatencyView, ModelLoad } from './types.js';

const OFF: LatencyView = {
  profile: 'off',
  seed: 0,
  draws: 0,
  queueFullStatus: 429,
  retryAfterMs: 1000,
  profiles: {},
  models: [],
};

export const NO_LATENCY: LatencyControl = {
  choose: () => undefined,
  draws: () => ({ draw: () => 0 }),
  view: () => OFF,
  update: () => OFF,
  reset: () => OFF,
};

export const NO_LOAD: ModelLoad = { running: () => 0, waiting: () => 0, models: () => [] };
