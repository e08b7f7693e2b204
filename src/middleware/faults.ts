import type { Middleware } from 'koa';

/** Injected faults by header and rule (filled in by the fault-injection work; passes through for now). */
export function faults(): Middleware {
  return async function faults(_ctx, next) {
    await next();
  };
}
