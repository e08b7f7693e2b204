import type { Middleware } from 'koa';
import { ApiError, ERRORS } from '../errors.js';
import { findKey } from '../keys.js';
import type { Operation } from '../operations.js';
import type { KeyState } from '../types.js';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer' };

/** The key presented in `Authorization: Bearer <key>`, or the 401 that fits what was sent instead. */
export function bearerToken(header: string | undefined): string {
  if (!header) throw new ApiError(ERRORS.MISSING_KEY, { headers: CHALLENGE });
  const space = header.indexOf(' ');
  const scheme = space < 0 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') throw new ApiError(ERRORS.INVALID_AUTH_SCHEME, { headers: { 'WWW-Authenticate': 'Bearer error="invalid_request"' } });
  const token = space < 0 ? '' : header.slice(space + 1).trim();
  if (!token) throw new ApiError(ERRORS.MISSING_KEY, { message: 'The bearer token is empty. Send Authorization: Bearer YOUR_KEY.', headers: CHALLENGE });
  return token;
}

/** Checks the bearer key of operations that need one and counts the request against the key. */
export function authenticate(keys: readonly KeyState[]): Middleware {
  if (!keys.length) throw new Error('auth: at least one API key must be configured');
  return async function authenticate(ctx, next) {
    const op = ctx.state.operation as Operation;
    if (op.auth === 'key') {
      const key = findKey(keys, bearerToken(ctx.get('authorization') || undefined));
      if (!key) throw new ApiError(ERRORS.INVALID_KEY, { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
      key.usage.requests++;
      key.usage.byOperation[op.id] = (key.usage.byOperation[op.id] ?? 0) + 1;
      ctx.state.key = key;
    }
    await next();
  };
}
