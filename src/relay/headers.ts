// What crosses the relay of a request's and an answer's headers, and the links of an answer's text.
import type { IncomingHttpHeaders } from 'node:http';

// Headers that belong to one connection, or that the relay sets itself; never forwarded, recorded or replayed.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
]);
// Request headers kept from the upstream: the mock's own key, its fault controls, and what fetch sets.
const NOT_FORWARDED = new Set([
  ...HOP_BY_HOP,
  'host',
  'authorization',
  'cookie',
  'content-length',
  'accept-encoding',
  'x-mock-fault',
  'prefer',
  'x-admin-token',
]);
// Response headers not relayed: transport (length, encoding, date) and identity (the mock issues its own x-request-id).
const NOT_RELAYED = new Set([
  ...HOP_BY_HOP,
  'content-length',
  'content-encoding',
  'date',
  'x-request-id',
  'set-cookie',
  'authorization',
]);

/** The headers sent upstream: the client's, less its key, the mock's fault controls and connection headers; the
 * upstream key instead. */
export function upstreamHeaders(incoming: IncomingHttpHeaders, key: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || NOT_FORWARDED.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  out['accept-encoding'] = 'identity';
  if (key) out.authorization = `Bearer ${key}`;
  return out;
}

/**
 * The upstream's response headers as relayed and recorded: no connection or identity headers, no secret in any value.
 */
export function relayHeaders(
  headers: Readonly<Record<string, string>>,
  scrub: (text: string) => string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!NOT_RELAYED.has(name)) out[name] = scrub(value);
  return out;
}

/** A text body with links to the upstream turned into links to this mock, which relays (or replays) them. */
export function rewriteLinks(body: Buffer, upstream: string, mock: string): Buffer {
  const text = body.toString('utf8');
  return text.includes(`${upstream}/`) ? Buffer.from(text.split(`${upstream}/`).join(`${mock}/`), 'utf8') : body;
}
