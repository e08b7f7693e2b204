import type { Context } from 'koa';
import { alterReply, dropConnection, injectedError } from '../domain/faults/apply.js';
import { faultFromHeaders } from '../domain/faults/header.js';
import { writePartial } from './partial.js';
import { endOf, type RequestEnd } from './requestEnd.js';
import { addHeader, openHead } from './requestContext.js';
import { describeFault, type FaultSpec } from '../domain/faults/spec.js';
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
  limits: { maxDelayMs: number },
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
function inject(ctx: Context, state: RequestState, fault: FaultSpec, services: Services): StepResult {
  if (fault.reset || fault.empty) {
    dropConnection(ctx, fault.reset ? 'reset' : 'empty');
    return STOP;
  }
  if (fault.status !== undefined) return injectedError({ ...fault, status: fault.status });
  if (fault.noRetry) addHeader(ctx.res, state, 'x-should-retry', 'false');
  return async () => {
    const reply = state.reply;
    if (!reply) return;
    const cut = fault.streamCut ?? fault.stall;
    if (reply.kind !== 'sse' && reply.kind !== 'feed' && cut !== undefined) {
      state.reply = undefined; // written here, so the reply is not written again
      openHead(ctx.res, state);
      state.stream = await writePartial(
        ctx,
        endOf(state, ctx.res),
        alterReply(reply, fault) as typeof reply,
        cut,
        fault.streamCut !== undefined ? 'cut' : 'stall',
        services.config.timeouts.stallMaxMs,
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
export function faults(services: Services): Step {
  const limits = { maxDelayMs: services.config.timeouts.stallMaxMs };
  return function faults(ctx, state) {
    const op = state.operation!;
    if (!faultable(op)) return;
    const chosen = chooseFault(ctx, state, services, op, limits);
    // Rules in shared state (Redis) are claimed with a Promise; in memory at once.
    if (chosen instanceof Promise) return chosen.then((c) => apply(ctx, state, services, c));
    return apply(ctx, state, services, chosen);
  };
}

/** The chosen fault (if any) applied: its delay first, then the fault itself. */
function apply(
  ctx: Context,
  state: RequestState,
  services: Services,
  chosen: Chosen,
): StepResult | Promise<StepResult> {
  if (!chosen) return;
  const { fault } = chosen;
  state.fault = chosen.label;
  state.faultSpec = fault;
  if (!fault.delayMs) return inject(ctx, state, fault, services);
  return waitOrLeave(endOf(state, ctx.res), services, fault.delayMs).then((left): StepResult => {
    if (!left) return inject(ctx, state, fault, services);
    ctx.respond = false;
    state.transportStatus = 0;
    state.stream = 'aborted';
    return STOP;
  });
}
