import { ApiError, ERRORS } from '../contract/errors.js';
import { findKey } from '../domain/keys.js';
import type { KeyState } from '../domain/keys.js';
import type { Step } from './steps.js';
import { adminAccess, bearerToken, type AdminRule } from './adminAccess.js';

// The admin rule (loopback, the admin token, the inspector's session cookie) lives in adminAccess.ts.
export { isLoopback } from './adminAccess.js';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer' };

// The answers to a bad credential never vary: made once, and returned rather than thrown on the early
// path, where a throw would cost more than the whole check.
const MISSING = new ApiError(ERRORS.MISSING_KEY, { headers: CHALLENGE });
const NOT_BEARER = new ApiError(ERRORS.INVALID_AUTH_SCHEME, {
  headers: { 'WWW-Authenticate': 'Bearer error="invalid_request"' },
});
const EMPTY = new ApiError(ERRORS.MISSING_KEY, {
  message: 'The bearer token is empty. Send Authorization: Bearer YOUR_KEY.',
  headers: CHALLENGE,
});
const WRONG_KEY = new ApiError(ERRORS.INVALID_KEY, { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });

const REFUSALS = { header: MISSING, scheme: NOT_BEARER, token: EMPTY } as const;

/** The token of `Authorization: Bearer <token>`, or the 401 that fits what was sent instead. */
function tokenOf(header: string | undefined): string | ApiError {
  const token = bearerToken(header);
  return typeof token === 'string' ? token : REFUSALS[token.missing];
}

/** The key state for an Authorization header, or the 401 that fits it (returned, not thrown); usage is not counted
 * here. */
export function checkKey(keys: readonly KeyState[], authorization: string | undefined): KeyState | ApiError {
  const token = tokenOf(authorization);
  if (token instanceof ApiError) return token;
  return findKey(keys, token) ?? WRONG_KEY;
}

/**
 * Checks the bearer key of operations that need one (or the admin rule) and counts the request against the key. The
 * first step after the route: a missing or wrong key is refused before anything else is read (the 401 returned, not
 * thrown, on the path a scanner or a misconfigured client hammers).
 */
export function authenticate(keys: readonly KeyState[], admin: AdminRule = {}): Step {
  if (!keys.length) throw new Error('auth: at least one API key must be configured');
  const adminRule = adminAccess(admin);
  return function authenticate(ctx, state) {
    const op = state.operation!;
    if (op.auth === 'admin') return adminRule(ctx, state);
    if (op.auth === 'key') {
      const key = checkKey(keys, ctx.req.headers.authorization);
      if (key instanceof ApiError) return key;
      state.key = key;
      key.usage.requests++;
      key.usage.byOperation[op.id] = (key.usage.byOperation[op.id] ?? 0) + 1;
    }
  };
}
