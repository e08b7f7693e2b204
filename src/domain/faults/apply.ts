import { ApiError, templateForStatus } from '../../contract/errors.js';
import type { Reply } from '../../contract/reply.js';
import { addedHeaders, breaks, endingOf, type FaultSpec } from './kinds.js';

/** Seconds a 429 fault advertises when the fault does not say (long enough to be real, short for tests). */
const DEFAULT_429_RETRY_S = 1;
/** Bytes zeroed at the start of a binary body for `malformed`: enough to break any file signature. */
const BROKEN_PREFIX = 16;

/** The error an injected status becomes: the usual envelope plus the headers a client acts on. */
export function injectedError(spec: FaultSpec & { status: number }): ApiError {
  const headers: Record<string, string> = {};
  const retryAfter = spec.retryAfter ?? (spec.status === 429 ? DEFAULT_429_RETRY_S : undefined);
  if (retryAfter !== undefined) {
    headers['retry-after'] = String(Math.ceil(retryAfter));
    headers['retry-after-ms'] = String(Math.round(retryAfter * 1000));
  }
  if (spec.status === 401) headers['WWW-Authenticate'] = 'Bearer error="invalid_token"';
  for (const [name, value] of addedHeaders(spec)) headers[name] = value;
  // The table's 403 row speaks of the admin API; an injected 403 is about the public endpoint called.
  const forbidden =
    spec.status === 403
      ? { code: 'permission_denied', message: 'You do not have permission to use this endpoint.' }
      : {};
  return new ApiError(templateForStatus(spec.status), { headers, ...forbidden });
}

/** A JSON text cut in half: a body no JSON parser accepts. */
function brokenJson(text: string): string {
  return text.slice(0, Math.max(1, Math.floor(text.length / 2)));
}

/**
 * The reply with a stream fault applied. Streams get their ending changed (sse.ts writes it);
 * `malformed` breaks the JSON body, one SSE event, or a binary body's first bytes.
 * Cuts and stalls of non-streamed bodies are written by writePartial (pipeline/transport.ts) instead.
 */
export function alterReply(reply: Reply, spec: FaultSpec): Reply {
  const broken = breaks(spec);
  if (reply.kind === 'sse') {
    const out = { ...reply };
    if (broken) out.malformedAt = reply.events.length > 1 ? 1 : 0;
    const ending = endingOf(spec);
    if (ending) Object.assign(out, { ending: ending.how, stopAfter: ending.after });
    return out;
  }
  if (!broken || reply.kind === 'feed') return reply; // a live feed is the admin API's: never faulted
  if (reply.kind === 'json') {
    return {
      ...reply,
      body: brokenJson(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body)),
      recipe: undefined,
    };
  }
  const body = Buffer.from(reply.body);
  body.fill(0, 0, Math.min(BROKEN_PREFIX, body.length));
  return { ...reply, body };
}
