import type { Reply } from '../contract/reply.js';
import type { Operation } from '../contract/operations.js';
import type { KeyState } from '../domain/keys.js';
import type { Services } from '../domain/services.js';
import type { RequestPlan } from './plan.js';

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
