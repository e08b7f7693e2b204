import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestRecord } from '../domain/journal/journal.js';
import { ALWAYS_FIELDS, DRAFT_FIELDS } from '../domain/journal/record.js';
import { writtenHead } from '../lib/internals.js';
import { RAW_ANSWER } from '../lib/symbols.js';
import type { ErrorTemplate } from '../contract/errors.js';
import type { RequestState } from './steps.js';

export type { RequestRecord } from '../domain/journal/journal.js';

/** Something that wants to see each finished request. */
export type RequestObserver = (record: RequestRecord) => void;

/** Who is told of each finished request, and the bound of what a record quotes of it (services.limits.records), set
 * once per app. */
export interface Reporting {
  readonly observers: readonly RequestObserver[];
  readonly maxModelChars: number;
}

// An incoming id is kept only when it is plainly safe to echo (and not too long: IdRule); anything else is replaced.
const SAFE_ID = /^[A-Za-z0-9._:-]+$/;

/** When a client's x-request-id is echoed: at most requests.maxRequestIdChars (fixtures/limits.json), and holding no
 * configured secret. Made once per app. */
export interface IdRule {
  readonly maxChars: number;
  readonly secrets?: { holds(text: string): boolean };
}

// Ids only need to be unique: a random prefix per process and a counter cost an increment per request.
const PREFIX = randomBytes(8).toString('hex');
let issued = 0;

/**
 * The request's id: the client's x-request-id when it is safe to echo by `rule`, else req_ and 32 hex
 * digits. An id that holds a configured secret is not safe to echo: it is replaced too. Without a rule
 * (an answer to no parsed request) the id is always made.
 */
export function requestIdFor(incoming: string | string[] | undefined, rule?: IdRule): string {
  if (
    rule &&
    typeof incoming === 'string' &&
    incoming.length <= rule.maxChars &&
    SAFE_ID.test(incoming) &&
    !rule.secrets?.holds(incoming)
  )
    return incoming;
  return `req_${PREFIX}${(issued++).toString(16).padStart(16, '0')}`;
}

/**
 * Starts the headers every answer carries: the request id and nosniff. They stay with the request, with
 * those the steps add (addHeader), until the answer is written: a JSON answer takes them all into one
 * writeHead (takeHead), which costs far less than setting them one by one (each setHeader checks its
 * name, stores it in a dictionary, and Node walks that again to write the head). A writer that reads or
 * writes the response's own headers (Koa, streams, partial bodies) sets them on it first (openHead).
 */
export function beginResponse(state: RequestState): void {
  state.head = ['x-request-id', state.requestId, 'x-content-type-options', 'nosniff'];
}

/** Adds a header to a list of name/value pairs; a name already there (in any case) has its value replaced, in place. */
function put(head: string[], name: string, value: string): void {
  const lower = name.toLowerCase();
  for (let i = 0; i < head.length; i += 2) {
    if (head[i]!.toLowerCase() === lower) {
      head[i + 1] = value;
      return;
    }
  }
  head.push(name, value);
}

/** Adds a header to the answer: to those kept with the request while they are, else on the response. A name given again
 * replaces the value. */
export function addHeader(res: ServerResponse, state: RequestState, name: string, value: string): void {
  if (state.head) put(state.head, name, value);
  else res.setHeader(name, value);
}

/** The headers kept with the request, as name/value pairs, for a writer that writes them itself; from here on addHeader
 * sets them on the response. */
export function takeHead(state: RequestState): string[] | undefined {
  const head = state.head;
  state.head = undefined;
  return head;
}

/** Sets the headers kept with the request on the response, in order, for Koa or a writer that reads the response's
 * headers. */
export function openHead(res: ServerResponse, state: RequestState): void {
  const head = takeHead(state);
  if (head) for (let i = 0; i < head.length; i += 2) res.setHeader(head[i]!, head[i + 1]!);
}

/**
 * The one end of every request, whatever ended it (its answer written, a fault, the stream time limit, the client
 * gone before or after the head or from behind another pipelined request, the server shutting down): gives back what
 * it held (`state.release`: room in the body budget, its model's slot or place), closes the stream it counted and
 * stops watching its connection (`state.end`), and tells the observers (the journal, /metrics, the log). Once: a
 * second call does nothing. Its timers are its waits', each cleared as it ends (RequestEnd tells them).
 */
export function endRequest(
  reporting: Reporting,
  req: IncomingMessage,
  path: string,
  state: RequestState,
  status: number,
  started: number,
  res?: ServerResponse,
): void {
  if (state.ended) return;
  state.ended = true;
  const release = state.release;
  state.release = undefined;
  state.end?.finish();
  release?.();
  reportRequest(reporting, req, path, state, status, started, res);
}

/**
 * Tells each observer about a finished request; `started` is its performance.now() on arrival. The
 * record carries the request's headers and body text and the response's headers as they are: the
 * journal bounds and masks what it keeps of them, and hashes the body (bodyHash) when it keeps the entry.
 * So too the response's body (the JSON text written, or the binary body) and a stream's events.
 */
export function reportRequest(
  { observers, maxModelChars }: Reporting,
  req: IncomingMessage,
  path: string,
  state: RequestState,
  status: number,
  started: number,
  res?: ServerResponse,
): void {
  if (!observers.length) return;
  const retry = Number.parseInt(req.headers['x-stainless-retry-count'] as string, 10);
  // The model the plan checked; before a plan (a refused request), the body's `model` as sent, cut.
  const named = state.body?.model;
  const model = state.plan?.model?.id ?? (typeof named === 'string' ? named.slice(0, maxModelChars) : undefined);
  const hint = Number(state.error?.headers['retry-after-ms']);
  const head = res && writtenHead(res);
  // An answer the connection tracker wrote for the request (server/connections.ts) is the one its client got.
  const raw = res && (res as ServerResponse & { [RAW_ANSWER]?: ErrorTemplate })[RAW_ANSWER];
  const usage = state.reply?.kind === 'json' || state.reply?.kind === 'sse' ? state.reply.usage : undefined;
  const record: Record<string, unknown> = {
    requestId: state.requestId,
    time: Date.now(),
    method: req.method ?? 'GET',
    path,
    operation: state.operation?.id,
    keyLabel: state.key?.masked,
    status: raw?.status ?? state.transportStatus ?? status,
    latencyMs: Math.round((performance.now() - started) * 100) / 100,
    errorCode: raw ? (raw.code ?? undefined) : state.error?.code,
    details: state.error?.details,
    retryCount: Number.isFinite(retry) ? retry : undefined,
    model,
    ...(state.sse?.worstLateMs !== undefined ? { streamLateMs: Math.round(state.sse.worstLateMs * 10) / 10 } : {}),
    ...(state.queuedMs !== undefined ? { queuedMs: Math.round(state.queuedMs * 10) / 10 } : {}),
    ...(usage ? { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens } : {}),
    ...(Number.isFinite(hint) ? { retryAfterMs: hint } : {}),
    request: { headers: req.headers, body: state.raw },
    // The header block Node wrote (read by the journal only when the entry is read), else the headers set
    // so far (before the head is written, or where Node keeps no block).
    ...(res ? (head !== undefined ? { responseHead: head } : { responseHeaders: res.getHeaders() }) : {}),
  };
  // The record draft as the pipeline left it; the response's body and a stream's events are references (no copy), which
  // the journal bounds and masks.
  for (const name of DRAFT_FIELDS) {
    const value = state[name];
    if (value !== undefined || ALWAYS_FIELDS.has(name)) record[name] = value;
  }
  for (const observe of observers) observe(record as RequestRecord);
}
