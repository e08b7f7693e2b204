import type { Departure, Exchange } from './types.js';

/**
 * What a client branches on: the status class, and for a 4xx the exact status (a 401 asks for a new key, a 429 for a
 * pause, a 400 for a fixed request); no answer at all is its own class.
 */
function statusKind(status: number): string {
  if (status === 0) return 'no answer';
  return status >= 400 && status < 500 ? String(status) : `${Math.floor(status / 100)}xx`;
}

const ENVELOPE_FIELDS = ['type', 'code', 'param'] as const;

/** The error object of a JSON error envelope, or undefined when the body is none. */
function envelopeOf(ex: Exchange): Record<string, unknown> | undefined {
  try {
    const error = (JSON.parse(ex.body.toString('utf8')) as { error?: unknown }).error;
    return error && typeof error === 'object' && !Array.isArray(error) ? (error as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const mediaType = (ex: Exchange) => (ex.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() || '(none)';

/** Whether a body is an event stream that ends in `data: [DONE]`. */
const endsInDone = (ex: Exchange) =>
  mediaType(ex) === 'text/event-stream' && /(^|\n)data: ?\[DONE\]\s*$/.test(ex.body.toString('utf8'));

const shown = (value: unknown) => (value === undefined ? 'absent' : JSON.stringify(value));

/**
 * Where the target's answer to a case departs from the baseline's, in what clients rely on: the status (see
 * statusKind), the error envelope's type, code and param, the retry-after and www-authenticate headers' presence, the
 * content type's media type and, for a streamed case, whether the answer is an event stream ending in `data: [DONE]`.
 * Pure: two answers in, the departures out (none when they agree).
 */
export function compareExchanges(target: Exchange, baseline: Exchange, streamed: boolean): Departure[] {
  const out: Departure[] = [];
  const add = (check: Departure['check'], what: string, t: string, b: string) => {
    if (t !== b) out.push({ check, what, target: t, baseline: b });
  };
  add('status', 'status', statusKind(target.status), statusKind(baseline.status));
  const te = envelopeOf(target);
  const be = envelopeOf(baseline);
  if (te || be) {
    add('error-envelope', 'error envelope', te ? 'present' : 'absent', be ? 'present' : 'absent');
    if (te && be) for (const f of ENVELOPE_FIELDS) add('error-envelope', `error.${f}`, shown(te[f]), shown(be[f]));
  }
  for (const name of ['retry-after', 'www-authenticate'])
    add(
      'header',
      name,
      target.headers[name] === undefined ? 'absent' : 'present',
      baseline.headers[name] === undefined ? 'absent' : 'present',
    );
  add('header', 'content-type', mediaType(target), mediaType(baseline));
  if (streamed) {
    const grammar = (ex: Exchange) => (endsInDone(ex) ? 'event stream ending in data: [DONE]' : 'no such stream');
    add('stream', 'stream', grammar(target), grammar(baseline));
  }
  return out;
}
