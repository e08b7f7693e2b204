// A placeholder while the latency model is assembled: nothing running or waiting. Replaced by the slots
// (slots.ts).
import type { ModelLoad } from './types.js';

export const NO_LOAD: ModelLoad = { running: () => 0, waiting: () => 0, models: () => [] };
