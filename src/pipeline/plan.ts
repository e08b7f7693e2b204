import type { Model } from '../domain/catalogue.js';
import type { ProfileChoice } from '../domain/latency/types.js';
import type { Services } from '../domain/services.js';
import { PACING_HEADER, pacingHeader, type PacingRequest } from '../text/pacing.js';
import type { Operation } from '../contract/operations.js';
import type { BoundOperation } from './handler.js';
import type { Step } from './steps.js';

/**
 * What is decided about a valid request, once, before its handler runs: the handler, admission (admit.ts), the
 * stream's metrics and the record read it from `state.plan` and decide none of it again. The fault is not here: the
 * faults step chooses it before the body is read (an injected fault answers even a body that is not valid), into
 * `state.faultSpec`.
 */
export interface RequestPlan {
  /**
   * The catalogue model the request names in its operation's `latency.model` field, of the operation's kind: a name
   * the catalogue does not have is a 400 here (`catalogue.require`). Undefined when the request names none (an
   * optional `model_id`), or, where the body's text may name another (`latency.textMayOverride`: an SSML voice),
   * when the field names no catalogue model (the handler checks the one it uses).
   */
  readonly model: Model | undefined;
  /** What X-Mock-Pacing asks for (askedPacing); undefined without the header or with control headers off. */
  readonly pacing: PacingRequest | undefined;
  /** The profile that times the answer and where it came from (`timing.from`): the header's, else the model's own;
   * undefined: it answers at once. */
  readonly timing: ProfileChoice | undefined;
  /** The model's own profile, whose cap, queue and slowdown the request takes whatever profile times it. */
  readonly lane: ProfileChoice | undefined;
}

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
