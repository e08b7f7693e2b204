// Placeholder while the latency model is assembled: no profile in force. Replaced by the control (control.ts).
import type { LatencyControl, LatencyView } from './types.js';

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
