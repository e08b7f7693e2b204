import type { Context, Middleware } from 'koa';
import { alterReply, dropConnection, injectedError } from '../faults/apply.js';
import { faultFromHeaders } from '../faults/header.js';
import { writePartial } from '../faults/partial.js';
import { describeFault, type FaultSpec } from '../faults/spec.js';
import { faultable, type Operation } from '../operations.js';
import type { KeyState, Reply, Services } from '../types.js';

/** The fault for this request: its headers (when allowed) first, then the configured rules. */
function chooseFault(ctx: Context, services: Services, op: Operation): { fault: FaultSpec; label: string } | undefined {
  const limits = { maxDelayMs: services.config.timeouts.stallMaxMs };
  if (services.config.faultHeaders) {
    const fault = faultFromHeaders(ctx.headers, limits);
    if (fault) return { fault, label: `${describeFault(fault)} [header]` };
  }
  return services.faultRules.pick({
    operation: op.id,
    keyLabel: (ctx.state.key as KeyState | undefined)?.config.label,
    headers: ctx.headers,
    body: ctx.state.body as Record<string, unknown> | undefined,
  });
}

/** Waits `ms` unless the client leaves first; true when the client is gone. */
async function waitOrLeave(ctx: Context, services: Services, ms: number): Promise<boolean> {
  if (ctx.res.destroyed) return true;
  const left = new AbortController();
  const gone = () => left.abort();
  ctx.res.once('close', gone);
  await services.clock.sleep(ms, left.signal);
  ctx.res.off('close', gone);
  return left.signal.aborted;
}

/**
 * Injected faults, from the X-Mock-Fault / Prefer headers or from fault rules. Before the handler:
 * delay, dropped connections and error statuses; after it: broken, cut and stalled bodies.
 * The admin API and tooling routes (health, OpenAPI) are never faulted.
 */
export function faults(services: Services): Middleware {
  return async function faults(ctx, next) {
    const op = ctx.state.operation as Operation;
    if (!faultable(op)) return next();
    const chosen = chooseFault(ctx, services, op);
    if (!chosen) return next();
    const { fault } = chosen;
    ctx.state.fault = chosen.label;
    if (fault.delayMs && (await waitOrLeave(ctx, services, fault.delayMs))) {
      ctx.respond = false;
      ctx.state.transportStatus = 0;
      ctx.state.stream = 'aborted';
      return;
    }
    if (fault.reset || fault.empty) return dropConnection(ctx, fault.reset ? 'reset' : 'empty');
    if (fault.status !== undefined) throw injectedError({ ...fault, status: fault.status });
    if (fault.noRetry) ctx.set('x-should-retry', 'false');
    await next();
    const reply = ctx.state.reply as Reply | undefined;
    if (!reply) return;
    const cut = fault.streamCut ?? fault.stall;
    if (reply.kind !== 'sse' && cut !== undefined) {
      ctx.state.reply = undefined; // written here, so the respond middleware leaves it alone
      ctx.state.stream = await writePartial(ctx, alterReply(reply, fault) as typeof reply, cut, fault.streamCut !== undefined ? 'cut' : 'stall', services.config.timeouts.stallMaxMs);
      return;
    }
    ctx.state.reply = alterReply(reply, fault);
  };
}
