// Which operations the relay answers, and the mock's own answer for the others.
import type { Operation } from '../contract/operations.js';
import { inOrder, type RequestState, type Step, type StepResult } from '../pipeline/steps.js';
import type { Context } from 'koa';

/**
 * Whether the relay answers an operation: every keyed operation of the API, and the media downloads its links lead to.
 */
export const relayed = (op: Operation): boolean => op.auth === 'key' || op.path.startsWith('/media/');

/** Runs validate, then handle, as the steps would without a relay. */
export function mockAnswer(
  validate: Step,
  handle: Step,
  ctx: Context,
  state: RequestState,
): StepResult | Promise<StepResult> {
  return inOrder(validate, handle)(ctx, state);
}
