import { maskKey } from '../../domain/keys.js';
import type { CaseResult } from '../../verdict/types.js';

/**
 * A secret a report must not show, and what it shows instead: a string is shown as its own mask
 * (sk-a...wxyz); a credential derived from the key (a near miss) as the key's mask.
 */
export type Secret = string | { readonly value: string; readonly masked: string };

const valueOf = (s: Secret): string => (typeof s === 'string' ? s : s.value);
const maskOf = (s: Secret): string => (typeof s === 'string' ? maskKey(s) : s.masked);

/** Headers as shown in reports: the Authorization token masked (sk-a...wxyz), everything else as sent (redact masks
 * secrets in them). */
export function maskHeaders(
  headers: Readonly<Record<string, string>>,
  secrets: readonly Secret[] = [],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'authorization') out[name] = value;
    else {
      const space = value.indexOf(' ');
      const token = space < 0 ? '' : value.slice(space + 1);
      // A secret's own form first: a near miss shows as the key's mask, not as a mask of itself.
      const known = secrets.find((s) => valueOf(s) === token);
      out[name] = token ? `${value.slice(0, space)} ${known ? maskOf(known) : maskKey(token)}` : value;
    }
  }
  return out;
}

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
    .filter((s) => valueOf(s).length >= 4)
    .sort((a, b) => valueOf(b).length - valueOf(a).length)
    .map((s) => ({ value: valueOf(s), masked: maskOf(s) }));
  prepared.set(secrets, { length: secrets.length, list });
  return list;
}

/**
 * Replaces every occurrence of each secret in a text by its masked form, and every copy cut short
 * (its first 8 characters or more, where a shortened excerpt ended): the last guard before output.
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
const UNSAFE =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

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
 * original length past that. The result is one line of printable text: valid in JSON, XML 1.0 and
 * TAP, and inert on a terminal.
 */
export function cleanText(text: string, secrets: readonly Secret[] = [], max = MAX_TEXT): string {
  // Only the start can be shown; the window is long enough that a secret across the cut is still whole.
  const longest = secrets.reduce((n, s) => Math.max(n, valueOf(s).length), 0);
  let end = max + longest;
  if ((text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end++; // not between the halves of a pair
  const window = text.length > end ? text.slice(0, end) : text;
  const escaped = redact(window, secrets).replace(UNSAFE, escapeChar);
  if (escaped.length <= max && window === text) return escaped;
  let cut = Math.min(max, escaped.length);
  // Not in the middle of an escape (\xhh, \uhhhh) or of a surrogate pair.
  const tail = /\\(x[0-9a-f]?|u[0-9a-f]{0,3})?$/.exec(escaped.slice(Math.max(0, cut - 5), cut));
  if (tail) cut -= tail[0].length;
  if ((escaped.charCodeAt(cut - 1) & 0xfc00) === 0xd800) cut--;
  return `${redact(escaped.slice(0, cut), secrets)}... (${codePoints(text)} characters)`;
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
 * (the reason, expected and actual of each failure, header values quoted in them, the request as
 * shown) passed through cleanText. The one place results are cleaned; reporters only format.
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
      url: cleanText(url, secrets),
      headers: cleanValue(headers, secrets) as Record<string, string>,
      ...(body !== undefined ? { body: cleanValue(body, secrets) } : {}),
    },
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
