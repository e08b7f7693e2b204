import type { Handler } from '../contract/types.js';

// The same bytes every time: a health check compares nothing but the status, and a constant body
// keeps it free of work and of anything a probe could make fail.
const HEALTHY = JSON.stringify({ status: 'ok' });

/** GET /__health: 200 `{"status":"ok"}` while the server accepts requests (no key, never faulted). */
export const health: Handler = () => ({ kind: 'json', body: HEALTHY });

/** GET /openapi.json: the OpenAPI document of the operations table, with this server as its server URL. */
export const serveOpenApi: Handler = async ({ baseUrl }) => {
  // Loaded on first use: serving the API never pays for the generator.
  const { openApiText } = await import('../tools/openapi/index.js');
  return { kind: 'json', body: openApiText(baseUrl) };
};
