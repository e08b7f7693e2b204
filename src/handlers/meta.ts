import type { Handler } from '../pipeline/handler.js';

// The same bytes every time: a health check compares nothing but the status, and a constant body
// keeps it free of work and of anything a probe could make fail.
const HEALTHY = JSON.stringify({ status: 'ok' });

/** GET /__health: 200 `{"status":"ok"}` while the server accepts requests (no key, never faulted). */
export const health: Handler = () => ({ kind: 'json', body: HEALTHY });
