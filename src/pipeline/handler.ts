import type { Reply } from '../contract/reply.js';
import type { Operation } from '../contract/operations.js';
import type { KeyState } from '../domain/keys.js';
import type { Services } from '../domain/services.js';
import type { Model } from '../domain/catalogue.js';
import type { ProfileChoice } from '../domain/latency/types.js';
import type { PacingRequest } from '../text/pacing.js';

/**
 * What is decided about a valid request, once, before its handler runs (the plan step, plan.ts): the handler,
 * admission (admit.ts), the stream's metrics and the record read it from `state.plan` and decide none of it again.
 * The fault is not here: the faults step chooses it before the body is read (an injected fault answers even a body
 * that is not valid), into `state.faultSpec`.
 */
export interface RequestPlan {
  /**
   * The catalogue model the request names in its operation's `latency.model` field, of the operation's kind: a name
   * the catalogue does not have is a 400 here (`catalogue.require`). Undefined when the request names none (an
   * optional `model_id`), or, where the body's text may name another (`latency.textMayOverride`: an SSML voice),
   * when the field names no catalogue model (the handler checks the one it uses).
   */
  readonly model: Model | undefined;
  /** What X-Mock-Pacing asks for (plan.ts askedPacing); undefined without the header or with control headers off. */
  readonly pacing: PacingRequest | undefined;
  /** The profile that times the answer and where it came from (`timing.from`): the header's, else the model's own;
   * undefined: it answers at once. */
  readonly timing: ProfileChoice | undefined;
  /** The model's own profile, whose cap, queue and slowdown the request takes whatever profile times it. */
  readonly lane: ProfileChoice | undefined;
}

/** What a handler receives: the validated body, path parameters and the calling key. */
export interface HandlerRequest {
  readonly body: Record<string, unknown>;
  readonly params: Record<string, string>;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The raw request body, for ids derived from the exact request. */
  readonly raw: string;
  readonly key: KeyState | undefined;
  /** Base URL for links in responses, e.g. http://127.0.0.1:4010. */
  readonly baseUrl: string;
  readonly services: Services;
  /** What is decided about the request once, before its handler: its catalogue model, pacing and profile (plan.ts). */
  readonly plan: RequestPlan;
}

/** An operation's handler: request in, reply out. */
export type Handler = (req: HandlerRequest) => Reply | Promise<Reply>;

/** An operation row with the handler that answers it: what the route table and the steps work on. */
export interface BoundOperation extends Operation {
  readonly handler: Handler;
}
