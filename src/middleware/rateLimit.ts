import type { Middleware } from 'koa';

/** Per-key request limits (filled in by the rate-limit work; passes every request through for now). */
export function rateLimit(): Middleware {
  return async function rateLimit(_ctx, next) {
    await next();
  };
}
