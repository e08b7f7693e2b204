import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { ApiError, ERRORS } from '../contract/errors.js';
import { JSON_TYPE } from './parseBody.js';
import { STOP, type RequestState } from './steps.js';

// The admin API's rule (docs/inspector.md#access-and-security): without an admin token, loopback clients
// whose Host names this machine (a page on a domain that rebinds to 127.0.0.1 is a loopback client too);
// with one, `Authorization: Bearer TOKEN` from anywhere, or, for a browser (which cannot add that header to
// a navigation, an EventSource or a media element), the session cookie that opening `/__admin/?token=TOKEN`
// once sets. In both modes a web page of another origin can neither change the mock's state nor load an
// admin answer into itself: browsers say where a request comes from (Origin, Sec-Fetch-Site), and a change
// must carry a JSON body, no body, or the inspector's own header, none of which a cross-site form can send.

/** True for a peer address on this machine (IPv4 127/8, IPv6 ::1, and IPv4-mapped 127/8). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Compares in constant time: both sides are hashed first, so their lengths are equal whatever was sent. */
const same = (sent: string, expected: Buffer): boolean => timingSafeEqual(sha256(sent), expected);

/** The header the inspector page sends with every call: a cross-site form cannot set it, and a cross-origin fetch that
 * sets it needs a preflight the mock never allows. */
const ADMIN_HEADER = 'x-uam-admin';

/** Methods that only read: they need no Origin match (their answers are not readable cross-origin: the mock sends no
 * CORS headers). */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What the admin rule is made of: the configuration's admin token, public URL and allowed host names. */
export interface AdminRule {
  readonly adminToken?: string | undefined;
  readonly publicUrl?: string | undefined;
  readonly allowedHosts?: readonly string[] | undefined;
}

// A Host header is a name or an IP literal, then a port or nothing (RFC 9110 7.2): `[::1]evil.com`, `a:1:2` or a name
// with brackets inside is none, and names no host.
const HOST = /^(\[[0-9A-Fa-f:.]+\]|[^[\]:@/\s]*)(?::\d*)?$/;

/**
 * The host name of a Host header, lower case, without its port (`[::1]` keeps its brackets, as a URL's hostname does);
 * undefined when the header is not a host and port.
 */
export function hostName(host: string): string | undefined {
  return HOST.exec(host)?.[1]!.toLowerCase();
}

/** True for a host name that can only mean this machine: `localhost`, an address of 127/8, `[::1]`. */
export function isLoopbackName(name: string): boolean {
  if (name === 'localhost' || name === '[::1]') return true;
  const parts = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(name);
  return parts !== null && parts.slice(1).every((p) => Number(p) <= 255);
}

/**
 * The Host check of loopback trust: true when a Host names this machine, the host of `--public-url`, or a
 * name of `--allowed-host` (`*.NAME`: any subdomain of NAME). A name a DNS server can point at 127.0.0.1
 * (DNS rebinding) is none of them, unless the user listed it.
 */
export function hostCheck(
  publicUrl: string | undefined,
  allowed: readonly string[] = [],
): (host: string | undefined) => boolean {
  const exact = new Set(allowed.filter((a) => !a.startsWith('*.')).map((a) => a.toLowerCase()));
  const suffixes = allowed.filter((a) => a.startsWith('*.')).map((a) => a.slice(1).toLowerCase());
  if (publicUrl) exact.add(new URL(publicUrl).hostname.toLowerCase());
  return (host) => {
    // No Host at all is HTTP/1.0 from a script: a browser always sends one.
    if (host === undefined) return true;
    const name = hostName(host);
    if (name === undefined) return false;
    return isLoopbackName(name) || exact.has(name) || suffixes.some((s) => name.endsWith(s) && name.length > s.length);
  };
}

const FOREIGN_HOST = new ApiError(ERRORS.ADMIN_FORBIDDEN, {
  message:
    'The admin API and the inspector answer only requests addressed to this machine by a loopback name (localhost, 127.0.0.1, [::1]), the host of --public-url, or a name given with --allowed-host NAME: a web page on a domain that resolves to 127.0.0.1 (DNS rebinding) must not read the journal. Reach the mock by one of those names, or start it with --allowed-host NAME.',
});
const CROSS_SITE = new ApiError(ERRORS.ADMIN_FORBIDDEN, {
  message:
    "A request from a web page of another origin may not reach the admin API: its Origin or Sec-Fetch-Site says it is not this server's own page. Scripts and SDKs, which send no Origin, are not affected.",
});
const NOT_JSON = new ApiError(ERRORS.UNSUPPORTED_CONTENT_TYPE, {
  message: `A change through the admin API takes a JSON body (Content-Type: application/json) or no body; a form or text body is what a cross-site page can send, so it is refused. The inspector page sends ${ADMIN_HEADER}: 1 instead.`,
});

/**
 * A page's origin is this server's when it is the origin the request was addressed to (`http://` or, behind
 * a TLS proxy, `https://` and the Host), or the origin of `--public-url` (a proxy that rewrites Host).
 */
function ownOrigin(origin: string, host: string | undefined, publicOrigin: string | undefined): boolean {
  return (
    origin === publicOrigin || (host !== undefined && (origin === `http://${host}` || origin === `https://${host}`))
  );
}

/**
 * True when a browser says the request comes from a page of another origin and it may not reach the admin
 * API: a change (any method but GET, HEAD, OPTIONS) with a foreign Origin, or any request whose
 * Sec-Fetch-Site is another site or origin, unless it is a top-level navigation (a link to the inspector
 * followed from elsewhere). This is the fetch-metadata resource isolation policy; a client that sends
 * neither header (curl, the SDKs, a script) is not a browser page and is never refused here.
 */
function fromForeignPage(ctx: Context, publicOrigin: string | undefined): boolean {
  const { headers, method } = ctx.req;
  const origin = headers.origin;
  const safe = SAFE.has(method ?? '');
  if (origin !== undefined && !safe && !ownOrigin(origin, headers.host, publicOrigin)) return true;
  const site = headers['sec-fetch-site'];
  if (site === undefined || site === 'same-origin' || site === 'none') return false;
  return !(safe && headers['sec-fetch-mode'] === 'navigate');
}

/** True for a change whose body a cross-site form or no-cors fetch could have sent: a body that is not JSON, without
 * the inspector's header. */
function simpleBody(ctx: Context): boolean {
  const { headers, method } = ctx.req;
  if (SAFE.has(method ?? '') || headers[ADMIN_HEADER] === '1') return false;
  const type = headers['content-type'];
  if (type !== undefined) return !JSON_TYPE.test(type);
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

// HTTP's own blanks (SP and HTAB): those around the token are not part of it. String.prototype.trim would
// also strip a no-break space and other Unicode spaces, so `Bearer KEY\u00a0` would pass as the key.
const isBlank = (code: number): boolean => code === 0x20 || code === 0x09;

/**
 * The token of `Authorization: Bearer <token>`, or why there is none: no header, another scheme, or an empty token.
 * The scheme ends at the first space (RFC 9110 11.4: `Bearer<TAB>token` is no bearer credential); blanks around the
 * token are not part of it. The one reading of the header for API keys and the admin token alike.
 */
export function bearerToken(header: string | undefined): string | { readonly missing: 'header' | 'scheme' | 'token' } {
  if (!header) return { missing: 'header' };
  const space = header.indexOf(' ');
  const scheme = space < 0 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') return { missing: 'scheme' };
  let start = space < 0 ? header.length : space + 1;
  let end = header.length;
  while (start < end && isBlank(header.charCodeAt(start))) start++;
  while (end > start && isBlank(header.charCodeAt(end - 1))) end--;
  return start < end ? header.slice(start, end) : { missing: 'token' };
}

/** The checks every admin request passes in both modes, before its credentials are looked at. */
function browserChecks(ctx: Context, publicOrigin: string | undefined): void {
  if (fromForeignPage(ctx, publicOrigin)) throw CROSS_SITE;
  if (simpleBody(ctx)) throw NOT_JSON;
}

const LOOPBACK_ONLY = new ApiError(ERRORS.ADMIN_FORBIDDEN, {
  message:
    'The admin API answers only clients on the same machine. Start the server with --admin-token TOKEN and send Authorization: Bearer TOKEN to use it from elsewhere.',
});
const NEEDS_TOKEN = new ApiError(ERRORS.ADMIN_FORBIDDEN, {
  message:
    'The admin API needs Authorization: Bearer <admin token> (the --admin-token the server was started with); in a browser, open /__admin/?token=<admin token> once.',
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
export function adminAccess(rule: AdminRule = {}): (ctx: Context, state: RequestState) => void | typeof STOP {
  const { adminToken, publicUrl } = rule;
  const publicOrigin = publicUrl ? new URL(publicUrl).origin : undefined;
  if (adminToken === undefined) {
    const hostAllowed = hostCheck(publicUrl, rule.allowedHosts);
    return (ctx) => {
      if (!isLoopback(ctx.req.socket.remoteAddress)) throw LOOPBACK_ONLY;
      if (!hostAllowed(ctx.req.headers.host)) throw FOREIGN_HOST;
      browserChecks(ctx, publicOrigin);
    };
  }
  const token = sha256(adminToken);
  const session = createHmac('sha256', randomBytes(32)).update(adminToken).digest('base64url');
  const sessionDigest = sha256(session);
  return (ctx, state) => {
    const { headers, method } = ctx.req;
    browserChecks(ctx, publicOrigin);
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
    const sent = bearerToken(headers.authorization);
    if (typeof sent === 'string' && same(sent, token)) return;
    const cookie = cookieValue(headers.cookie, cookieName(ctx));
    if (cookie !== undefined && same(cookie, sessionDigest)) {
      if (!SAFE.has(method ?? '') && !fromThisOrigin(ctx)) throw CROSS_ORIGIN;
      return;
    }
    throw NEEDS_TOKEN;
  };
}
