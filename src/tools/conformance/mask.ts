import { maskKey } from '../../domain/keys.js';
import type { CaseResult, Exchange, ShownAnswer } from '../../verdict/types.js';

/**
 * A secret a report must not show, and what it shows instead: a string is shown as its own mask
 * (sk-a...wxyz); a credential derived from the key (a near miss) as the key's mask.
 */
export type Secret = string | { readonly value: string; readonly masked: string };

const valueOf = (s: Secret): string => (typeof s === 'string' ? s : s.value);
const maskOf = (s: Secret): string => (typeof s === 'string' ? maskKey(s) : s.masked);

/**
 * The shortest secret looked for in text: a shorter one is a word any text may hold (`test`, `key`, `a`), so
 * replacing it would garble what the target said and prove nothing. Such a key is kept out of reports by its mask
 * alone, where the runner put it (shownRequest).
 */
export const RARE_SECRET = 8;

// A copy of a secret cut short (an excerpt's end) is masked from this many leading characters on.
const PARTIAL = 8;

type Prepared = readonly { readonly value: string; readonly masked: string }[];

/** The secrets a text is masked of, longest first, each with its mask: worked out once per list of secrets (a run
 * cleans thousands of strings with one list), again should the list grow. */
const prepared = new WeakMap<readonly Secret[], { readonly length: number; readonly list: Prepared }>();
function longestFirst(secrets: readonly Secret[]): Prepared {
  const known = prepared.get(secrets);
  if (known?.length === secrets.length) return known.list;
  const list = secrets
    .filter((s) => valueOf(s).length >= RARE_SECRET)
    .sort((a, b) => valueOf(b).length - valueOf(a).length)
    .map((s) => ({ value: valueOf(s), masked: maskOf(s) }));
  prepared.set(secrets, { length: secrets.length, list });
  return list;
}

/**
 * Replaces, in a text the target sent (an excerpt, a reason, a header value), every occurrence of each secret of 8
 * characters or more by its masked form, and every copy cut short (its first 8 characters or more, where a shortened
 * excerpt ended). Only values are passed here, never a report's serialised text, whose syntax a mask would break.
 * Whole copies go first, the longest secret first, so that a secret made from another (the key with a
 * character added, the key cut short) is masked whole, not cut in two by the other's mask.
 */
export function redact(text: string, secrets: readonly Secret[]): string {
  let out = text;
  const long = longestFirst(secrets);
  // A report cleans every string it shows, most of them short and free of secrets: a scan finds that at once.
  for (const { value, masked } of long) if (out.includes(value)) out = out.split(value).join(masked);
  for (const { value: secret, masked } of long) {
    if (secret.length <= PARTIAL) continue;
    const head = secret.slice(0, PARTIAL);
    for (let at = out.indexOf(head); at >= 0; at = out.indexOf(head, at + masked.length)) {
      let end = at + PARTIAL;
      while (end < out.length && end - at < secret.length && out[end] === secret[end - at]) end++;
      out = out.slice(0, at) + masked + out.slice(end);
    }
  }
  return out;
}

/** The longest text a report shows from the target: longer text is cut, with its length. */
export const MAX_TEXT = 500;

// What a report must not carry raw: C0 and C1 controls and DEL (terminal escapes, NUL, BEL, line
// breaks), bidirectional and line-separator format characters, the BOM and the two non-characters
// XML 1.0 forbids, and lone surrogates (invalid UTF-16, which no encoder writes as UTF-8).
const unsafe = (controls: string) =>
  new RegExp(
    `[${controls}\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028-\\u202e\\u2066-\\u2069\\ufeff\\ufffe\\uffff]|[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]`,
    'g',
  );
const UNSAFE = unsafe('\\u0000-\\u001f');
// The same, but for a text shown as lines (an answer's body): tabs and line feeds kept.
const UNSAFE_IN_LINES = unsafe('\\u0000-\\u0008\\u000b-\\u001f');

/** Text with each lone surrogate (which encodeURIComponent refuses, and no encoder writes) replaced by U+FFFD. */
export const wellFormed = (text: string): string =>
  text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

const escapeChar = (ch: string): string => {
  const code = ch.charCodeAt(0);
  if (code >= 0xd800 && code <= 0xdfff) return '\ufffd';
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/** Characters (code points) in a text, without building an array of them. */
function codePoints(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n--;
      i++;
    }
  }
  return n;
}

/**
 * Text from the target made safe for every report: the secrets masked, control and format
 * characters written as visible escapes (\x1b, \u202e), lone surrogates replaced by U+FFFD (a body's
 * invalid UTF-8 already is, by the decoder), and at most `max` characters, with an ellipsis and the
 * original length past that. The result is one line of printable text (with `lines`, tabs and line
 * feeds are kept): valid in JSON, XML 1.0 and TAP, and inert on a terminal.
 */
export function cleanText(text: string, secrets: readonly Secret[] = [], max = MAX_TEXT, lines = false): string {
  const unsafe = lines ? UNSAFE_IN_LINES : UNSAFE;
  // Only the start can be shown; the window is long enough that a secret across the cut is still whole.
  const longest = secrets.reduce((n, s) => Math.max(n, valueOf(s).length), 0);
  let end = max + longest;
  if ((text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end++; // not between the halves of a pair
  const window = text.length > end ? text.slice(0, end) : text;
  const escaped = redact(window, secrets).replace(unsafe, escapeChar);
  if (escaped.length <= max && window === text) return escaped;
  let cut = Math.min(max, escaped.length);
  // Not in the middle of an escape (\xhh, \uhhhh) or of a surrogate pair.
  const tail = /\\(x[0-9a-f]?|u[0-9a-f]{0,3})?$/.exec(escaped.slice(Math.max(0, cut - 5), cut));
  if (tail) cut -= tail[0].length;
  if ((escaped.charCodeAt(cut - 1) & 0xfc00) === 0xd800) cut--;
  // A mask put in after the escaping (a copy the cut shortened) is escaped too: a key may hold any character.
  return `${redact(escaped.slice(0, cut), secrets).replace(unsafe, escapeChar)}... (${codePoints(text)} characters)`;
}

const cleanValue = (value: unknown, secrets: readonly Secret[]): unknown => {
  if (typeof value === 'string') return cleanText(value, secrets);
  if (Array.isArray(value)) return value.map((v) => cleanValue(v, secrets));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [cleanText(k, secrets), cleanValue(v, secrets)]));
  return value;
};

/**
 * A case's result as every reporter receives it: each string that can carry the target's words
 * (the reason, expected and actual of each failure, header values quoted in them) passed through
 * cleanText with the secrets; the request as shown (its secrets already masked where they were put,
 * shownRequest) cleaned of control characters. The one place results are cleaned; reporters only format.
 */
export function cleanResult(r: CaseResult, secrets: readonly Secret[]): CaseResult {
  const { method, url, headers, body } = r.request;
  return {
    ...r,
    ...(r.reason !== undefined ? { reason: cleanText(r.reason, secrets) } : {}),
    failures: r.failures.map((f) => ({
      check: f.check,
      expected: cleanText(f.expected, secrets),
      actual: cleanText(f.actual, secrets),
    })),
    request: {
      method,
      url: cleanText(url),
      headers: cleanValue(headers, []) as Record<string, string>,
      ...(body !== undefined ? { body: cleanValue(body, []) } : {}),
    },
  };
}

/** The most of an answer's body a report shows, in characters; and of its headers. */
const MAX_BODY_SHOWN = 2000;
const MAX_HEADERS_SHOWN = 64;
// Enough bytes to fill MAX_BODY_SHOWN characters, whatever the encoding, with room for a secret across the cut.
const BODY_BYTES_READ = 4 * MAX_BODY_SHOWN + 1024;

/**
 * An answer as reports show it: its status, headers (at most 64) and the start of its body (JSON, text and event
 * streams as text, their lines kept; other types as their size and type), every text cleaned and masked.
 */
export function shownAnswer(ex: Exchange, secrets: readonly Secret[]): ShownAnswer {
  const headers = Object.fromEntries(
    Object.entries(ex.headers)
      .slice(0, MAX_HEADERS_SHOWN)
      .map(([name, value]) => [cleanText(name), cleanText(value, secrets)]),
  );
  const type = ex.headers['content-type'] ?? '';
  const size = `${ex.body.length}${ex.incomplete ? '+' : ''} bytes`;
  let body: string | undefined;
  if (ex.body.length && /json|text/.test(type)) {
    const text = ex.body.subarray(0, BODY_BYTES_READ).toString('utf8');
    body = cleanText(text, secrets, MAX_BODY_SHOWN, true);
    if (ex.body.length > BODY_BYTES_READ && !body.endsWith(' characters)')) body += `... (${size})`;
  } else if (ex.body.length) body = `(${size} of ${cleanText(type) || 'unknown type'})`;
  return {
    status: ex.status,
    headers,
    ...(body !== undefined ? { body } : {}),
    ...(ex.incomplete ? { incomplete: `the body ${ex.incomplete.detail}` } : {}),
    ...(ex.error ? { error: cleanText(ex.error, secrets) } : {}),
  };
}

/** A body as shown in reports: long strings cut to their start and length, so a failure stays readable. */
export function shortBody(body: unknown): unknown {
  if (typeof body === 'string')
    return body.length > 80 ? `${body.slice(0, 40)}... (${[...body].length} characters)` : body;
  if (Array.isArray(body)) return body.map(shortBody);
  if (body && typeof body === 'object')
    return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, shortBody(v)]));
  return body;
}
