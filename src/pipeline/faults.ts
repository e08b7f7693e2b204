import type { Context } from 'koa';
import { alterReply, injectedError } from '../domain/faults/apply.js';
import { faultFromHeaders } from '../domain/faults/header.js';
import { addedHeaders, dropOf, endingOf } from '../domain/faults/kinds.js';
import type { StreamTimers } from './pacer.js';
import { dropConnection, writePartial } from './transport.js';
import { endOf, type RequestEnd } from './requestEnd.js';
import { addHeader, openHead } from './requestContext.js';
import { describeFault, type FaultLimits, type FaultSpec } from '../domain/faults/spec.js';
import { faultable, type Operation } from '../contract/operations.js';
import type { Services } from '../domain/services.js';
import { STOP, type RequestState, type Step, type StepResult } from './steps.js';

/** The fault for this request: its headers (when allowed) first, then the configured rules. */
type Chosen = { fault: FaultSpec; label: string } | undefined;

function chooseFault(
  ctx: Context,
  state: RequestState,
  services: Services,
  op: Operation,
  limits: FaultLimits,
): Chosen | Promise<Chosen> {
  const headers = ctx.req.headers;
  if (services.config.faultHeaders) {
    const fault = faultFromHeaders(headers, limits);
    if (fault) return { fault, label: `${describeFault(fault)} [header]` };
  }
  return services.state.claimFault({ operation: op.id, keyName: state.key?.config.name, headers, body: state.body });
}

/** Waits `ms` unless the client leaves first (`end`, the request's, tells); true when the client is gone. */
export async function waitOrLeave(end: RequestEnd, services: Services, ms: number): Promise<boolean> {
  if (end.closed) return true;
  const left = new AbortController();
  const gone = () => left.abort();
  end.onClose(gone);
  await services.clock.sleep(ms, left.signal);
  end.offClose(gone);
  return left.signal.aborted;
}

/** A fault once any delay is over: a dropped connection, an error status, or work for after the handler. */
function inject(ctx: Context, state: RequestState, fault: FaultSpec, on: FaultSetting): StepResult {
  const drop = dropOf(fault);
  if (drop) {
    dropConnection(ctx, state, drop);
    return STOP;
  }
  if (fault.status !== undefined) return injectedError({ ...fault, status: fault.status });
  for (const [name, value] of addedHeaders(fault)) addHeader(ctx.res, state, name, value);
  return async () => {
    const reply = state.reply;
    if (!reply) return;
    const ending = endingOf(fault);
    if (reply.kind !== 'sse' && reply.kind !== 'feed' && ending) {
      state.reply = undefined; // written here, so the reply is not written again
      openHead(ctx.res, state);
      state.stream = await writePartial(
        ctx,
        endOf(state, ctx.res),
        alterReply(reply, fault) as typeof reply,
        ending.after,
        ending.how,
        on.services.config.timeouts.stallMaxMs,
        on.timers,
      );
      return;
    }
    state.reply = alterReply(reply, fault);
  };
}

/**
 * Injected faults, from the X-Mock-Fault / Prefer headers or from fault rules. Before the handler:
 * delay, dropped connections and error statuses; after it: broken, cut and stalled bodies.
 * The admin API and the tooling routes (health check, OpenAPI document) are never faulted.
 */
export function faults(services: Services, timers: StreamTimers): Step {
  const on: FaultSetting = {
    services,
    timers,
    limits: { maxDelayMs: services.config.timeouts.stallMaxMs, faults: services.limits.faults },
  };
  return function faults(ctx, state) {
    const op = state.operation!;
    if (!faultable(op)) return;
    const chosen = chooseFault(ctx, state, services, op, on.limits);
    // Rules in shared state (Redis) are claimed with a Promise; in memory at once.
    if (chosen instanceof Promise) return chosen.then((c) => apply(ctx, state, on, c));
    return apply(ctx, state, on, chosen);
  };
}

/** What the step works with: the services, the timers a stalled body waits on, the bounds of a fault. */
interface FaultSetting {
  readonly services: Services;
  readonly timers: StreamTimers;
  readonly limits: FaultLimits;
}

/** The chosen fault (if any) applied: its delay first, then the fault itself. */
function apply(ctx: Context, state: RequestState, on: FaultSetting, chosen: Chosen): StepResult | Promise<StepResult> {
  if (!chosen) return;
  const { fault } = chosen;
  state.fault = chosen.label;
  state.faultSpec = fault;
  if (!fault.delayMs) return inject(ctx, state, fault, on);
  return waitOrLeave(endOf(state, ctx.res), on.services, fault.delayMs).then((left): StepResult => {
    if (!left) return inject(ctx, state, fault, on);
    ctx.respond = false;
    state.transportStatus = 0;
    state.stream = 'aborted';
    return STOP;
  });
}
