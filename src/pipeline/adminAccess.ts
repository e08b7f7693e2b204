import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { ApiError, ERRORS } from '../contract/errors.js';
import { STOP, type RequestState } from './steps.js';

// The admin API's rule (docs/faults.md#admin-api, docs/inspector.md#access-and-security): without an admin
// token, loopback clients only; with one, `Authorization: Bearer TOKEN` from anywhere, or, for a browser
// (which cannot add that header to a navigation, an EventSource or a media element), the session cookie
// that opening `/__admin/?token=TOKEN` once sets.

/** True for a peer address on this machine (IPv4 127/8, IPv6 ::1, and IPv4-mapped 127/8). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Compares in constant time: both sides are hashed first, so their lengths are equal whatever was sent. */
const same = (sent: string, expected: Buffer): boolean => timingSafeEqual(sha256(sent), expected);

/** The header the inspector page sends with every call: a cross-site form cannot set it, and a cross-origin fetch that sets it needs a preflight the mock never allows. */
export const ADMIN_HEADER = 'x-uam-admin';

/** Methods that only read: no same-origin check for them (their answers are not readable cross-origin: the mock sends no CORS headers). */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

const LOOPBACK_ONLY = new ApiError(ERRORS.ADMIN_FORBIDDEN, {
  message: 'The admin API answers only clients on the same machine. Start the server with --admin-token TOKEN and send Authorization: Bearer TOKEN to use it from elsewhere.',
});
const NEEDS_TOKEN = new ApiError(ERRORS.ADMIN_FORBIDDEN, {
  message: 'The admin API needs Authorization: Bearer <admin token> (the --admin-token the server was started with); in a browser, open /__admin/?token=<admin token> once.',
});
const WRONG_LOGIN = new ApiError(ERRORS.ADMIN_FORBIDDEN, {
  message: 'That is not the admin token (the --admin-token the server was started with).',
  headers: { 'referrer-policy': 'no-referrer', 'cache-control': 'no-store' },
});
const CROSS_ORIGIN = new ApiError(ERRORS.ADMIN_FORBIDDEN, {
  message: `A change through the admin session cookie must come from the inspector page itself: same Origin and the ${ADMIN_HEADER}: 1 header (or send Authorization: Bearer <admin token>).`,
});

/** The value of the query parameter `token` in a request target, or undefined when there is none. */
function queryToken(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  return new URLSearchParams(url.slice(q + 1)).get('token') ?? undefined;
}

/** The value of one cookie in a Cookie header. */
function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The session cookie's name. Browsers keep cookies by host, not by port: two mocks on one machine
 * would overwrite each other's cookie under one name, so the name carries the port the server listens on.
 */
function cookieName(ctx: Context): string {
  const port = ctx.req.socket?.localPort;
  return port ? `uam_admin_${port}` : 'uam_admin';
}

/** A state-changing call made with the cookie must come from a page of this origin (a CSRF defence). */
function fromThisOrigin(ctx: Context): boolean {
  const headers = ctx.req.headers;
  if (headers[ADMIN_HEADER] !== '1') return false;
  const origin = headers.origin;
  return origin === undefined || origin === `http://${headers.host ?? ''}`;
}

/**
 * The admin rule as a step's check: returns when the request may go on, throws the 403 when not, and
 * answers a login (`GET /__admin/?token=TOKEN`) itself with a 303 to `/__admin/` that sets the cookie
 * (STOP). The cookie's value is an HMAC of the token under a key made when the server starts: it is not
 * the token, cannot be made without it, and no cookie of an earlier run opens a later one.
 */
export function adminAccess(adminToken: string | undefined): (ctx: Context, state: RequestState) => void | typeof STOP {
  if (adminToken === undefined) {
    return (ctx) => {
      if (!isLoopback(ctx.req.socket.remoteAddress)) throw LOOPBACK_ONLY;
    };
  }
  const token = sha256(adminToken);
  const session = createHmac('sha256', randomBytes(32)).update(adminToken).digest('base64url');
  const sessionDigest = sha256(session);
  return (ctx, state) => {
    const { headers, method } = ctx.req;
    if (state.operation?.id === 'admin.inspector') {
      const sent = queryToken(ctx.req.url ?? '');
      if (sent !== undefined) {
        if (!same(sent, token)) throw WRONG_LOGIN;
        // Over plain HTTP (the mock never serves TLS itself) the cookie cannot be Secure: a Secure cookie
        // set over http:// is refused by browsers.
        state.reply = {
          kind: 'binary',
          status: 303,
          contentType: 'text/plain; charset=utf-8',
          body: Buffer.from('Signed in: see /__admin/\n'),
          headers: {
            location: '/__admin/',
            'set-cookie': `${cookieName(ctx)}=${session}; HttpOnly; SameSite=Strict; Path=/__admin`,
            'referrer-policy': 'no-referrer',
            'cache-control': 'no-store',
          },
        };
        return STOP;
      }
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
    if (match && same(match[1]!, token)) return;
    const cookie = cookieValue(headers.cookie, cookieName(ctx));
    if (cookie !== undefined && same(cookie, sessionDigest)) {
      if (!SAFE.has(method ?? '') && !fromThisOrigin(ctx)) throw CROSS_ORIGIN;
      return;
    }
    throw NEEDS_TOKEN;
  };
}
