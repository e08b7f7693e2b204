import type { Middleware } from 'koa';
import { ApiError, ERRORS } from '../errors.js';
import type { Operation } from '../operations.js';
import { strictId, type SchemaRegistry } from '../schemas.js';
import type { Limits } from '../limits.js';
import { toDetails } from '../validation.js';

/** Whether a JSON value holds more than `limit` values in all (counted without recursion). */
function holdsMoreThan(value: unknown, limit: number): boolean {
  const stack = [value];
  for (let n = 0; stack.length; n++) {
    if (n > limit) return true;
    const v = stack.pop();
    if (v && typeof v === 'object') for (const child of Object.values(v)) stack.push(child);
  }
  return false;
}

/** Checks the body against the operation's request schema; a 400 names the field, the rule and the violations. */
export function validate(schemas: SchemaRegistry, strict: boolean, limits: Limits['requests']): Middleware {
  return async function validate(ctx, next) {
    const op = ctx.state.operation as Operation;
    if (op.requestSchema) {
      const id = strict ? strictId(op.requestSchema) : op.requestSchema;
      const body = ctx.state.body as unknown;
      const firstError = schemas.checkFirst(id, body);
      if (firstError.length) {
        const all = toDetails(holdsMoreThan(body, limits.maxValuesForAllErrors) ? firstError : schemas.check(id, body));
        if (!all.length) all.push({ param: null, code: 'invalid_value', message: 'The request body does not match its schema.' });
        const details = all.slice(0, limits.maxDetails);
        const first = details[0]!;
        const more = all.length > 1 ? ` (${all.length - 1} more${all.length > details.length ? `; details lists the first ${details.length}` : ' in details'})` : '';
        throw new ApiError(ERRORS.VALIDATION, { param: first.param, code: first.code, message: first.message + more, details });
      }
    }
    await next();
  };
}
