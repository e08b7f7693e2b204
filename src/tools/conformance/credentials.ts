// Near misses: credentials derived from the valid key that are almost right. A correct server refuses
// each with 401; a hurried gateway accepts some, by how it reads the header or compares the key.
import { wellFormed } from './mask.js';

/** How a request carries its credential: the Authorization header's value (none when absent), other headers, query
 * parameters. */
export interface Credential {
  readonly authorization?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly query?: Readonly<Record<string, string>>;
}

/** One near miss: a token made from the key, and how it is sent. */
interface NearMiss {
  /** The case id's segment: `auth.near-miss.<id>.<operation>`. */
  readonly id: string;
  /** What is sent, for the case's description. */
  readonly what: string;
  /** The hurried gateway that takes it. */
  readonly accepts: string;
  /** The token made from the key (the key itself when absent); undefined when this key allows none that differs. */
  readonly token?: (key: string) => string | undefined;
  /** How the token is sent (as a bearer token when absent). */
  readonly send?: (token: string) => Credential;
  /** How reports show it, given the key's mask, when `send` encodes the token (else `send` of the mask). */
  readonly show?: (masked: string) => Credential;
}

const bearer = (token: string): Credential => ({ authorization: `Bearer ${token}` });

/** A character of the same kind as `ch` (digit, lower or upper case letter) that is not `ch`; else 'x' or 'y'. */
function other(ch: string): string {
  const next = (from: string, to: string) => (ch === to ? from : String.fromCharCode(ch.charCodeAt(0) + 1));
  if (/[0-9]/.test(ch)) return next('0', '9');
  if (/[a-z]/.test(ch)) return next('a', 'z');
  if (/[A-Z]/.test(ch)) return next('A', 'Z');
  return ch === 'x' ? 'y' : 'x';
}

/** The key with the character at `at` replaced by another of its kind. */
const changedAt = (key: string, at: number): string => key.slice(0, at) + other(key[at]!) + key.slice(at + 1);

/** The key's prefix: up to its last `-` or `_` (sk-proj-, pk_live_), else its first half. */
function prefixOf(key: string): string | undefined {
  const sep = Math.max(key.lastIndexOf('-', key.length - 2), key.lastIndexOf('_', key.length - 2));
  const prefix = sep > 0 ? key.slice(0, sep + 1) : key.slice(0, Math.floor(key.length / 2));
  return prefix && prefix !== key ? prefix : undefined;
}

const swapCase = (key: string): string | undefined => {
  const swapped = [...key].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
  return swapped === key ? undefined : swapped;
};

/**
 * The near misses, in the order the cases run. Not among them: the scheme's letter case (`bearer`,
 * `BEARER`: RFC 9110 makes it case-insensitive, so a server may take it) and several spaces between
 * the scheme and the token (RFC 7235 allows 1*SP); blanks around the whole value are not sent either,
 * since HTTP strips them before any server sees them.
 */
export const NEAR_MISSES: readonly NearMiss[] = [
  // The scheme: the key intact, in an Authorization header that is not `Bearer <key>`.
  {
    id: 'scheme-token',
    what: "the key with the scheme 'Token'",
    accepts: 'takes the last word of the header, whatever the scheme',
    send: (t) => ({ authorization: `Token ${t}` }),
  },
  {
    id: 'scheme-none',
    what: 'the key alone, with no scheme',
    accepts: "strips an optional 'Bearer ' and compares the rest",
    send: (t) => ({ authorization: t }),
  },
  {
    id: 'scheme-colon',
    what: "the key after 'Bearer:'",
    accepts: 'splits the header on spaces and takes the second part',
    send: (t) => ({ authorization: `Bearer: ${t}` }),
  },
  {
    id: 'scheme-glued',
    what: "the key glued to 'Bearer' with no space",
    accepts: "cuts the first 6 characters, or removes 'Bearer', and trims",
    send: (t) => ({ authorization: `Bearer${t}` }),
  },
  {
    id: 'scheme-twice',
    what: "the key after 'Bearer Bearer'",
    accepts: 'takes the last word of the header',
    send: (t) => ({ authorization: `Bearer Bearer ${t}` }),
  },
  {
    id: 'basic-user',
    what: 'the key as the user name of Basic credentials (base64 of "key:")',
    accepts: 'takes Basic credentials and reads the key from the user name',
    send: (t) => ({ authorization: `Basic ${Buffer.from(`${t}:`).toString('base64')}` }),
    show: (masked) => ({ authorization: `Basic base64(${masked}:)` }),
  },
  {
    id: 'list',
    what: "an unknown key, then the key, as a list: 'Bearer unknown, Bearer key'",
    accepts: 'splits the header on commas and takes any credential that matches',
    send: (t) => ({ authorization: `Bearer unknown-key, Bearer ${t}` }),
  },
  // The key altered a little, as a bearer token.
  {
    id: 'key-appended',
    what: 'the key with one character added at the end',
    accepts: 'takes a token that starts with the key, or compares the first N characters',
    token: (k) => k + other(k[k.length - 1]!),
  },
  {
    id: 'key-truncated',
    what: 'the key cut short by one character',
    accepts: 'takes a token the key starts with (a prefix match)',
    token: (k) => (k.length > 1 ? k.slice(0, -1) : undefined),
  },
  {
    id: 'key-last-changed',
    what: 'the key with its last character changed',
    accepts: 'compares only the first N characters',
    token: (k) => changedAt(k, k.length - 1),
  },
  {
    id: 'key-middle-changed',
    what: 'the key with a character in its middle changed',
    accepts: 'compares the first and last characters (the masked form, sk-a...wxyz)',
    token: (k) => (k.length > 2 ? changedAt(k, Math.floor(k.length / 2)) : undefined),
  },
  {
    id: 'key-prefix',
    what: "the key's prefix only (up to its last '-' or '_', else its first half)",
    accepts: "checks the key's format (its prefix) rather than the key",
    token: prefixOf,
  },
  {
    id: 'key-case',
    what: 'the key with the case of its letters swapped',
    accepts: 'compares keys without regard to case',
    token: swapCase,
  },
  {
    id: 'key-same-format',
    what: "another key of the same length and format (the key's prefix, every later letter and digit changed)",
    accepts: 'takes any key of the right length or format',
    token: (k) => {
      const keep = prefixOf(k)?.length ?? 0;
      return k.slice(0, keep) + [...k.slice(keep)].map((c) => (/[0-9a-zA-Z]/.test(c) ? other(c) : c)).join('');
    },
  },
  {
    id: 'key-split',
    what: 'the key split in two by a space',
    accepts: 'removes every space from the token',
    token: (k) =>
      k.length > 1 ? `${k.slice(0, Math.floor(k.length / 2))} ${k.slice(Math.floor(k.length / 2))}` : undefined,
  },
  {
    id: 'key-twice',
    what: 'the key twice, separated by a space',
    accepts: 'takes the first word of the token',
    token: (k) => `${k} ${k}`,
  },
  {
    id: 'key-repeated',
    what: 'the key twice in a row',
    accepts: 'takes a token that contains or starts with the key',
    token: (k) => k + k,
  },
  { id: 'key-quoted', what: 'the key in double quotes', accepts: 'unquotes the token', token: (k) => `"${k}"` },
  {
    id: 'key-nbsp',
    what: 'the key followed by a no-break space (U+00A0)',
    accepts: "trims the token with a Unicode-aware trim (JavaScript's trim, Python's strip)",
    token: (k) => `${k}\u00a0`,
  },
  // The key intact, somewhere other than the Authorization header.
  {
    id: 'x-api-key',
    what: "the key in an 'x-api-key' header, with no Authorization header",
    accepts: "also reads the key from 'x-api-key' (the Anthropic style)",
    send: (t) => ({ headers: { 'x-api-key': t } }),
  },
  {
    id: 'api-key',
    what: "the key in an 'api-key' header, with no Authorization header",
    accepts: "also reads the key from 'api-key' (the Azure OpenAI style)",
    send: (t) => ({ headers: { 'api-key': t } }),
  },
  {
    id: 'any-header',
    what: "the key as a bearer token in a header of no meaning ('x-conformance-credential'), with no Authorization header",
    accepts: 'looks for the key in every header',
    send: (t) => ({ headers: { 'x-conformance-credential': `Bearer ${t}` } }),
  },
  {
    id: 'proxy-authorization',
    what: "'Proxy-Authorization: Bearer <key>', with no Authorization header",
    accepts: 'reads either authorization header',
    send: (t) => ({ headers: { 'proxy-authorization': `Bearer ${t}` } }),
  },
  {
    id: 'query-api_key',
    what: "the key in the query as 'api_key', with no Authorization header",
    accepts: "also reads the key from the query ('?api_key=')",
    send: (t) => ({ query: { api_key: t } }),
  },
  {
    id: 'query-key',
    what: "the key in the query as 'key', with no Authorization header",
    accepts: "also reads the key from the query ('?key=', the Google style)",
    send: (t) => ({ query: { key: t } }),
  },
  {
    id: 'cookie',
    what: "the key in a cookie ('api_key'), with no Authorization header",
    accepts: 'also reads the key from a cookie',
    send: (t) => ({ headers: { cookie: `api_key=${t}` } }),
  },
];

const byId = new Map(NEAR_MISSES.map((n) => [n.id, n]));

/** A near miss by id; throws for an id the table does not have (a case file's mistake). */
function nearMiss(id: string): NearMiss {
  const n = byId.get(id);
  if (!n) throw new Error(`conformance: unknown near miss '${id}'`);
  return n;
}

/**
 * The credential a near miss sends for this key, or undefined when the key allows none that differs from it. With
 * `masked` (the key's mask), the credential as reports show it: the mask where the token goes, whatever token the
 * near miss made from the key, so a report shows no more of the key than its mask does.
 */
export function nearMissCredential(id: string, key: string, masked?: string): Credential | undefined {
  const n = nearMiss(id);
  const token = n.token ? n.token(key) : key;
  if (token === undefined || (n.token && token === key)) return undefined;
  if (masked !== undefined) return (n.show ?? n.send ?? bearer)(masked);
  return (n.send ?? bearer)(token);
}

/**
 * Every string derived from the key that a request may carry, or an answer that echoes one may show, for masking: each
 * near miss's token, the key as a query parameter encodes it, and as a JSON string writes it (a quote, a backslash
 * escaped). Each is shown as the key's own mask, so a report shows no more of the key than the key's mask does (a
 * prefix's own mask would show its middle).
 */
export function derivedSecrets(key: string): string[] {
  const out = new Set<string>();
  for (const n of NEAR_MISSES) {
    const token = n.token?.(key);
    if (token !== undefined && token !== key) out.add(token);
  }
  out.add(encodeURIComponent(wellFormed(key)));
  out.add(JSON.stringify(key).slice(1, -1));
  out.add(Buffer.from(`${key}:`).toString('base64'));
  out.delete(key);
  return [...out];
}
