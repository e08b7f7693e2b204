import { ApiError, ERRORS } from '../contract/errors.js';
import type { Handler } from '../pipeline/handler.js';

// The same bytes every time: a health check compares nothing but the status, and a constant body
// keeps it free of work and of anything a probe could make fail.
const HEALTHY = JSON.stringify({ status: 'ok' });

/**
 * GET /__health: 200 `{"status":"ok"}` while the server accepts requests (no key, never faulted).
 * With shared state (Redis) it also says which instance answered; while Redis cannot be reached, or does
 * not answer a PING within `state.healthPingMs` (stopped or hung: its connection stays open), it is a 503
 * with the reason, so a load balancer stops sending this instance requests it could only refuse. In
 * memory it waits on nothing. With logging to stdout, `log.dropped` counts the log lines dropped because
 * nobody read stdout fast enough (0 while it keeps up).
 */
export const health: Handler = async ({ services }) => {
  const state = await services.state.health();
  const dropped = services.logDropped?.();
  if (state.kind === 'memory')
    return {
      kind: 'json',
      body: typeof dropped === 'number' ? `{"status":"ok","log":{"dropped":${dropped}}}` : HEALTHY,
    };
  const { ok, reason, instance, unrecorded } = state;
  return {
    kind: 'json',
    status: ok ? 200 : 503,
    body: {
      ...(ok
        ? { status: 'ok', state: 'redis', instance, unrecorded }
        : { status: 'unavailable', state: 'redis', reason, instance, unrecorded }),
      ...(typeof dropped === 'number' ? { log: { dropped } } : {}),
    },
  };
};

/** GET /metrics: every metric of this instance in Prometheus text format (domain/metrics/), as its registry writes it. */
export const metrics: Handler = async ({ services }) => {
  const { metrics } = services;
  // The route exists only with metrics on (createApp leaves it out with `off`); a 404 all the same.
  if (!metrics) throw new ApiError(ERRORS.NOT_FOUND, { message: 'Metrics are off (--metrics off).' });
  const body = Buffer.from(await metrics.text());
  return { kind: 'binary', contentType: metrics.contentType, body };
};
