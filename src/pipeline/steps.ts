import type { Context } from 'koa';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ApiError } from '../contract/errors.js';
import type { BoundOperation } from './handler.js';
import type { KeyState } from '../domain/keys.js';
import type { Reply } from '../contract/reply.js';
import { EMPTY_DRAFT, type RecordDraft } from '../domain/journal/record.js';
import type { FaultSpec } from '../domain/faults/spec.js';
import type { RequestEnd } from './requestEnd.js';
import type { RequestPlan } from './handler.js';

/** What is learnt about one request as it is answered; it lives in ctx.state. Its recorded part, the record draft
 * (fault, stream, responseBody, sse, profile, ignoredFields, violations), is typed by the record's field table. */
export interface RequestState extends RecordDraft {
  requestId: string;
  /** When the request reached the app, by performance.now(): its record's latency runs from it. */
  started: number;
  operation?: BoundOperation;
  /** The path as the operation was found by (the exact map's); undefined: the path Koa parses (ctx.path). */
  path?: string;
  key?: KeyState;
  /** The parsed JSON body and its exact text (ids are derived from the text). */
  body?: Record<string, unknown>;
  raw?: string;
  /** True for a body of requests.largeBodyBytes or more: its steps take turns with other requests (runSteps). */
  large?: boolean;
  reply?: Reply;
  error?: ApiError;
  /** The injected fault as applied (a relayed stream applies it as it goes); `fault` is its label in the record. */
  faultSpec?: FaultSpec;
  /** Gives back what the request holds (room in the body budget, its model's slot); called once, by endRequest. */
  release?: () => void;
  /** The end of the request: what its waits watch to learn that the client is gone (requestEnd.ts). */
  end?: RequestEnd;
  /** Set by endRequest: the request is over and reported. */
  ended?: boolean;
  /** 0 when no HTTP status reached the client (connection dropped or left); overrides ctx.status in the record. */
  transportStatus?: number;
  /** When the request arrived, on the stream timers' clock: a stream's time to first token runs from it. */
  arrived?: number;
  /** What is decided about the request once it is valid (its model, pacing and profile), made by the plan step. */
  plan?: RequestPlan;
  /** How long the request waited for a slot of its model (its latency profile's name is `profile`). */
  queuedMs?: number;
  /**
   * The answer's headers not yet set on the response, as name/value pairs in order (requestContext.ts beginResponse).
   */
  head?: string[];
}

/** A request's state with every field there from the start, so all requests share one object shape. */
export function requestState(requestId: string, operation?: BoundOperation, started = 0): RequestState {
  return {
    requestId,
    started,
    operation,
    path: undefined,
    key: undefined,
    body: undefined,
    raw: undefined,
    large: undefined,
    reply: undefined,
    error: undefined,
    faultSpec: undefined,
    release: undefined,
    end: undefined,
    ended: false,
    transportStatus: undefined,
    arrived: undefined,
    plan: undefined,
    queuedMs: undefined,
    head: undefined,
    ...EMPTY_DRAFT,
  };
}

/** Work a step leaves for after the handler; these run in reverse order, once the handler has answered. */
export type After = () => void | Promise<void>;

/** Returned by a step that has ended the exchange itself: the steps after it do not run. */
export const STOP = Symbol('stop');

/**
 * What a step returns: nothing, work for after the handler, STOP, or the error that refuses the
 * request (returned rather than thrown on the paths clients hit often: a rejection through async
 * frames costs more than a microsecond; other errors are thrown).
 */
export type StepResult = void | After | typeof STOP | ApiError;

/** One step of answering an operation; a step that needs no I/O stays synchronous. */
export type Step = (ctx: Context, state: RequestState) => StepResult | Promise<StepResult>;

/** Two steps as one, the second only when the first lets the request go on: for a caller that takes one step. */
export function inOrder(first: Step, second: Step): Step {
  return function inOrder(ctx, state) {
    const result = first(ctx, state);
    if (result instanceof Promise) return result.then((r) => (r === undefined ? second(ctx, state) : r));
    return result === undefined ? second(ctx, state) : result;
  };
}

/**
 * Runs the steps in order, then the work they left, last first: the same order as nested middleware,
 * without an async frame and a promise per layer (a large body's steps wait a turn between them). A refusal or a thrown error skips the work left, as
 * it would skip the rest of an outer middleware; the refusal is returned.
 */
export async function runSteps(
  steps: readonly Step[],
  ctx: Context,
  state: RequestState,
): Promise<ApiError | undefined> {
  let after: After[] | undefined;
  for (const step of steps) {
    let result = step(ctx, state);
    if (result instanceof Promise) result = await result;
    if (result === STOP) break;
    if (result instanceof ApiError) return result;
    if (result) (after ??= []).push(result);
    // Each step of a large body takes milliseconds (decoding, validating, hashing megabytes): between them, a turn
    // of the event loop for the other requests, so that they wait for one step at most, not for all of them.
    if (state.large) await nextTurn();
  }
  if (!after) return undefined;
  for (let i = after.length - 1; i >= 0; i--) {
    const done = after[i]!();
    if (done instanceof Promise) await done;
  }
  return undefined;
}
