import type { Middleware } from 'koa';
import { ApiError, ERRORS } from '../errors.js';
import type { Operation } from '../operations.js';
import { strictId, type SchemaRegistry } from '../schemas.js';
import { toDetails } from '../validation.js';

/** Checks the body against the operation's request schema; a 400 names the field, the rule and every violation. */
export function validate(schemas: SchemaRegistry, strict: boolean): Middleware {
  return async function validate(ctx, next) {
    const op = ctx.state.operation as Operation;
    if (op.requestSchema) {
      const id = strict ? strictId(op.requestSchema) : op.requestSchema;
      const errors = schemas.check(id, ctx.state.body);
      if (errors.length) {
        const details = toDetails(errors);
        const first = details[0]!;
        const more = details.length > 1 ? ` (${details.length - 1} more in details)` : '';
        throw new ApiError(ERRORS.VALIDATION, { param: first.param, code: first.code, message: first.message + more, details });
      }
    }
    await next();
  };
}
