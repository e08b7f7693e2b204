import { createHash, timingSafeEqual } from 'node:crypto';
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

/** True for a peer address on this machine (IPv4 127/8, IPv6 ::1, and IPv4-mapped 127/8). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * The admin API's rule: with an admin token, the bearer token must be it (from any address);
 * without one, only clients on this machine are served. Public API keys never open it.
 */
function checkAdmin(adminToken: string | undefined, authorization: string | undefined, peer: string | undefined): void {
  if (adminToken === undefined) {
    if (isLoopback(peer)) return;
    throw new ApiError(ERRORS.ADMIN_FORBIDDEN, { message: 'The admin API answers only clients on the same machine. Start the server with --admin-token TOKEN and send Authorization: Bearer TOKEN to use it from elsewhere.' });
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (match && timingSafeEqual(sha256(match[1]!), sha256(adminToken))) return;
  throw new ApiError(ERRORS.ADMIN_FORBIDDEN, { message: 'The admin API needs Authorization: Bearer <admin token> (the --admin-token the server was started with).' });
}

/** Checks the bearer key of operations that need one (or the admin rule) and counts the request against the key. */
export function authenticate(keys: readonly KeyState[], adminToken?: string): Middleware {
  if (!keys.length) throw new Error('auth: at least one API key must be configured');
  return async function authenticate(ctx, next) {
    const op = ctx.state.operation as Operation;
    if (op.auth === 'admin') checkAdmin(adminToken, ctx.get('authorization') || undefined, ctx.req.socket.remoteAddress);
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
