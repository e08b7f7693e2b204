import type { Model } from '../domain/catalogue.js';
import type { Services } from '../domain/services.js';
import { PACING_HEADER, pacingHeader, type PacingRequest } from '../text/pacing.js';
import type { Operation } from '../contract/operations.js';
import type { BoundOperation, RequestPlan } from './handler.js';
import type { Step } from './steps.js';

type Headers = Record<string, string | string[] | undefined>;
/** The header as the operations table names it (the operations whose answers it times). */
const PACING_NAME = 'X-Mock-Pacing';

/**
 * What the request's X-Mock-Pacing header asks for, read once (planFor) on the operations whose answers a
 * latency profile times (their rows list the header), with control headers on; undefined without a header. One it
 * cannot read, a part out of its bounds or a part given twice is a 400 naming the part, for a plain answer as for a
 * stream: the header is never dropped in silence. A ttft may not pass the time limit of the answer: a stream's
 * (timeouts.streamMaxMs) or a plain answer's (timeouts.answerMaxMs).
 */
function askedPacing(
  services: Services,
  op: Operation,
  body: Record<string, unknown> | undefined,
  headers: Headers,
): PacingRequest | undefined {
  if (!services.config.faultHeaders || headers[PACING_HEADER] === undefined || !op.headers?.includes(PACING_NAME))
    return undefined;
  const { timeouts } = services.config;
  const limit =
    body?.stream === true
      ? { ms: timeouts.streamMaxMs, name: 'stream time limit' }
      : { ms: timeouts.answerMaxMs, name: 'answer time limit' };
  return pacingHeader(headers, limit, services.limits.messages.maxPacingPartChars);
}

const NONE: RequestPlan = { model: undefined, pacing: undefined, timing: undefined, lane: undefined };

/**
 * The plan of a valid request to `op`: each decision's refusal (an unreadable header, an unknown model or profile) is
 * thrown as its 400. Not `timed` (with a relay, whose answers keep the timing they were recorded with): no profile.
 */
export function planFor(
  services: Services,
  op: BoundOperation,
  body: Record<string, unknown> | undefined,
  headers: Record<string, string | string[] | undefined>,
  timed = true,
): RequestPlan {
  const pacing = askedPacing(services, op, body, headers);
  const model = modelOf(services, op, body);
  if (!model || !timed) return pacing || model ? { ...NONE, model, pacing } : NONE;
  const timing = services.latency.choose(model.id, pacing?.profile);
  // A header that picks another profile, or none (`profile=off`), still runs in its model's lane.
  const lane = pacing?.profile === undefined ? timing : services.latency.choose(model.id);
  return { model, pacing, timing, lane };
}

/** The catalogue model the request names, checked once (see RequestPlan.model). */
function modelOf(services: Services, op: BoundOperation, body: Record<string, unknown> | undefined): Model | undefined {
  const field = op.latency?.model;
  const kind = op.doc.models;
  const id = field === undefined ? undefined : body?.[field];
  if (typeof id !== 'string' || !kind) return undefined;
  if (op.latency!.textMayOverride) return services.catalogue.find(id);
  return services.catalogue.require(id, kind, field);
}

/** The step after validation that makes the request's plan (planFor); its refusals are thrown, as a handler's are. */
export function plan(services: Services, timed = true): Step {
  return function plan(ctx, state) {
    state.plan = planFor(services, state.operation!, state.body, ctx.req.headers, timed);
  };
}
