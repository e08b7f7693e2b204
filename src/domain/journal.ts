import { createHash } from 'node:crypto';
import { findOperation } from '../contract/operations.js';
import { isRecipe, type TextRecipe } from '../contract/reply.js';
import { CompletionText } from '../text/wire.js';
import { flattenString as flat } from '../lib/internals.js';
import { packageLimits } from './limits.js';
import { scrubPath, secretScrubber } from './secrets.js';

/** What is known about one finished request; observers (journal, log) receive it. */
export interface RequestRecord {
  readonly requestId: string;
  readonly time: number;
  readonly method: string;
  readonly path: string;
  readonly operation: string | undefined;
  readonly keyLabel: string | undefined;
  readonly status: number;
  readonly latencyMs: number;
  readonly errorCode: string | null | undefined;
  readonly details: readonly unknown[] | undefined;
  readonly fault: string | undefined;
  readonly stream: string | undefined;
  readonly retryCount: number | undefined;
  readonly model: string | undefined;
  /** Body fields the request schema does not list, accepted and ignored: JSON pointers, masked, at most requests.maxIgnoredFields (then `...`). */
  readonly ignoredFields?: readonly string[];
  /** SHA-256 (hex) of the request body's bytes, when a body was read: shows whether a retry resent the same request. The journal adds it to its entry (from request.body). */
  readonly bodyHash?: string;
  /** The wait the answer asked for, in ms (its `retry-after-ms`), when it carried one: a 429, or a fault with a retry hint. */
  readonly retryAfterMs?: number;
  /** What the validating proxy found wrong with the request or the upstream's answer (absent when nothing). */
  readonly violations?: readonly Violation[];
  /** The request as it came, for the inspector; the journal keeps it bounded and masked (see RequestDetail). */
  readonly request?: RequestDetail;
  /** The response's headers as sent (the journal keeps them bounded and masked). */
  readonly responseHeaders?: Readonly<Record<string, string | number | readonly string[] | undefined>>;
  /**
   * The response's body. As recorded: the JSON text written (or, for a short one, its recipe: the text is
   * made again when the entry is read), or the binary body (references, never copies). As journalled: a text body's first records.maxResponseBodyChars characters (fixtures/limits.json)
   * with every configured secret masked; a binary body is left out (its size is `responseBytes`; the
   * inspector reads the bytes from GET /__admin/requests/:id/body).
   */
  readonly responseBody?: string | Buffer | TextRecipe;
  /** As journalled: the whole text body's length in characters, so a cut body shows as cut. */
  readonly responseBodyChars?: number;
  /** As journalled: a binary body's size in bytes. */
  readonly responseBytes?: number;
  /** A streamed answer's events as written, with their times; journalled masked, at most records.maxStreamEvents events and records.maxStreamEventChars characters of their text (fixtures/limits.json). */
  readonly sse?: SentEvents;
  /**
   * The response's header block as written to the socket (status line, then `Name: value` lines), a record
   * may carry instead of responseHeaders: the text exists already, and the journal reads it only when the
   * entry is read. Never part of a journal entry.
   */
  readonly responseHead?: string;
}

/**
 * The request's headers and body text. As recorded: what the server had. As journalled: within the records
 * bounds of fixtures/limits.json (maxHeaders headers, names of maxHeaderNameChars and values of maxHeaderChars
 * characters, the body's first maxBodyChars), credential headers masked, every configured secret masked
 * (`bodyChars` is the whole body's length, so a cut shows).
 */
export interface RequestDetail {
  readonly headers: Readonly<Record<string, string | number | readonly string[] | undefined>>;
  readonly body?: string;
  readonly bodyChars?: number;
}

/** One server-sent event as written: its data text and when, in ms from the response's head. */
export interface SentEvent {
  readonly ms: number;
  readonly data: string;
}

/** The events a stream wrote: the first ones, within the bounds, and `total`, how many were written in all. */
export interface SentEvents {
  readonly events: readonly SentEvent[];
  readonly total: number;
}

/** One departure from the API seen by the validating proxy: the rule (`response.status`, `request.schema`, ...), what it wants, what came. */
export interface Violation {
  readonly rule: string;
  readonly expected: string;
  readonly actual: string;
}

/** One journal entry: a finished request, with long client-supplied parts cut to size and secrets masked. */
export type JournalEntry = Omit<RequestRecord, 'responseBody'> & {
  /** A text body's first records.maxResponseBodyChars characters, masked (see RequestRecord.responseBody). */
  readonly responseBody?: string;
};

/** The fields of a record an unread entry keeps apart (see Unread): most requests have none of them. */
interface Rare {
  readonly details: readonly unknown[] | undefined;
  readonly fault: string | undefined;
  readonly stream: string | undefined;
  readonly retryCount: number | undefined;
  readonly ignoredFields: readonly string[] | undefined;
  readonly bodyHash: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly violations: readonly Violation[] | undefined;
  readonly requestBodyChars: number | undefined;
  readonly responseHeaders: RequestRecord['responseHeaders'];
  readonly responseBodyChars: number | undefined;
  readonly responseBytes: number | undefined;
  readonly sse: SentEvents | undefined;
}

// A record's fields in the order the server lists them (requestContext.ts), and which of them are rare.
// prettier-ignore
const RECORD_FIELDS = [
  'requestId', 'time', 'method', 'path', 'operation', 'keyLabel', 'status', 'latencyMs', 'errorCode', 'details', 'fault', 'stream',
  'retryCount', 'model', 'responseBody', 'sse', 'ignoredFields', 'retryAfterMs', 'violations', 'request', 'responseHead',
  'responseHeaders', 'bodyHash', 'responseBodyChars', 'responseBytes',
] as const;
const RARE_FIELDS = new Set<string>([
  'details',
  'fault',
  'stream',
  'retryCount',
  'ignoredFields',
  'bodyHash',
  'retryAfterMs',
  'violations',
  'responseHeaders',
  'responseBodyChars',
  'responseBytes',
  'sse',
]);

/**
 * A record not read yet: it becomes its entry (masked, cut, hashed) when first read. It is held as one
 * object of plain fields with the request's headers as one text, not as the record's tree of objects:
 * the ring holds the last thousand requests, which under load live just long enough to be copied out
 * of V8's young generation and then die in the old one, and a tree of a dozen objects per request cost
 * a quarter of the CPU of a chat completion in garbage collection. For the same reason the fields most
 * requests do not have (a fault, a stream, violations, ...) sit in a second object, absent for most:
 * every field of the entry is copied with it.
 */
class Unread {
  private readonly requestId: string;
  private readonly time: number;
  private readonly method: string;
  private readonly path: string;
  private readonly operation: string | undefined;
  private readonly keyLabel: string | undefined;
  private readonly status: number;
  private readonly latencyMs: number;
  private readonly errorCode: string | null | undefined;
  private readonly model: string | undefined;
  private readonly requestHeaders: string | undefined;
  private readonly requestBody: string | undefined;
  private readonly responseHead: string | undefined;
  private readonly responseBody: string | Buffer | TextRecipe | undefined;
  /** The fields most requests do not have, in an object of their own (none for most entries). */
  private readonly rare: Rare | undefined;

  constructor(r: RequestRecord, texts: SharedTexts) {
    this.requestId = r.requestId;
    this.time = r.time;
    this.method = r.method;
    this.path = r.path;
    this.operation = r.operation;
    this.keyLabel = r.keyLabel;
    this.status = r.status;
    this.latencyMs = r.latencyMs;
    this.errorCode = r.errorCode;
    this.model = r.model;
    this.requestHeaders = r.request && texts.requestHeaders(r.request.headers);
    this.requestBody = r.request?.body;
    this.responseHead = r.responseHead === undefined ? undefined : texts.responseHead(r.responseHead);
    this.responseBody = flat(r.responseBody);
    const bodyChars = r.request?.bodyChars;
    this.rare = hasRare(r)
      ? {
          details: r.details,
          fault: r.fault,
          stream: r.stream,
          retryCount: r.retryCount,
          ignoredFields: r.ignoredFields,
          bodyHash: r.bodyHash,
          retryAfterMs: r.retryAfterMs,
          violations: r.violations,
          requestBodyChars: bodyChars,
          responseHeaders: r.responseHeaders,
          responseBodyChars: r.responseBodyChars,
          responseBytes: r.responseBytes,
          sse: r.sse, // the writer's texts by reference: most of their pieces are shared by every event of the stream
        }
      : undefined;
  }

  /** The record again, with only the fields it had (an absent optional field stays absent), in the record's order. */
  record(): RequestRecord {
    return rebuild(this as unknown as Record<string, unknown>, this.rare as Record<string, unknown> | undefined, this.requestHeaders, this.requestBody);
  }
}

/** Whether a record has any of the fields most requests lack (see Rare); `details` apart, with `withDetails` false. */
function hasRare(r: RequestRecord, withDetails = true): boolean {
  return (
    (withDetails && r.details !== undefined) ||
    r.fault !== undefined ||
    r.stream !== undefined ||
    r.retryCount !== undefined ||
    r.ignoredFields !== undefined ||
    r.bodyHash !== undefined ||
    r.retryAfterMs !== undefined ||
    r.violations !== undefined ||
    r.request?.bodyChars !== undefined ||
    r.responseHeaders !== undefined ||
    r.responseBodyChars !== undefined ||
    r.responseBytes !== undefined ||
    r.sse !== undefined
  );
}

/**
 * A record made again from what an unread entry kept: `common` holds the fields by their record names
 * (requestHeaders and requestBody apart), `rare` the fields most records lack. Only the fields the record
 * had (an absent optional field stays absent), in the record's order.
 */
function rebuild(common: Record<string, unknown>, rare: Record<string, unknown> | undefined, requestHeaders: string | undefined, requestBody: string | undefined): RequestRecord {
  const out: Record<string, unknown> = {};
  for (const name of RECORD_FIELDS) {
    if (name === 'request') {
      if (requestHeaders === undefined) continue;
      out.request = {
        headers: headersFromText(requestHeaders),
        ...(requestBody === undefined ? {} : { body: requestBody }),
        ...(rare?.requestBodyChars === undefined ? {} : { bodyChars: rare.requestBodyChars }),
      };
      continue;
    }
    const value = RARE_FIELDS.has(name) ? rare?.[name] : common[name];
    if (value !== undefined || BASE_FIELDS.has(name)) out[name] = value;
  }
  return out as unknown as RequestRecord;
}

/**
 * The header texts unread entries hold, one copy of each: a client sends the same headers request after
 * request, and the mock answers with the same ones but for the request id (and the Date, once a second),
 * so most entries share them instead of each holding its own (which the garbage collector would copy
 * out of the young generation). A new request's headers are compared with those of the last few texts
 * made, value by value, and a response's header block with the last few blocks: a repeat costs those
 * comparisons, not a text built and hashed to be looked up.
 */
class SharedTexts {
  /** The last request header texts made, newest first, with the names and values they were made from. */
  private requests: { readonly pairs: readonly unknown[]; readonly text: string }[] = [];
  /** The last response header lines kept (see responseHead), newest first. */
  private heads: string[] = [];

  /** The text of a request's headers (see headerText), shared with earlier entries when they are the same. */
  requestHeaders(headers: RequestDetail['headers']): string {
    search: for (const seen of this.requests) {
      const pairs = seen.pairs;
      let i = 0;
      for (const name in headers) {
        const value = headers[name];
        if (value === undefined) continue;
        if (pairs[i] !== name || pairs[i + 1] !== value) continue search;
        i += 2;
      }
      if (i === pairs.length) return seen.text;
    }
    const text = headerText(headers);
    // A list value (a repeated header) is a new array in every request, so it never matches a later one.
    const pairs: unknown[] = [];
    for (const name in headers) if (headers[name] !== undefined) pairs.push(name, headers[name]);
    this.requests = [{ pairs, text }, ...this.requests.slice(0, RECENT_TEXTS - 1)];
    return text;
  }

  /**
   * A response's header lines without its status line and its x-request-id line, which the mock writes
   * first (beginResponse) and the journal leaves out of an entry's response headers anyway (it is the
   * entry's requestId): the rest repeats from answer to answer, and is shared with earlier entries when
   * it is the same. The text starts with the line break that ended the status line (headersFromBlock
   * reads it as a block whose first line is empty).
   */
  responseHead(head: string): string {
    const first = head.indexOf('\r\n');
    if (first < 0) return head;
    const second = head.startsWith('x-request-id:', first + 2) ? head.indexOf('\r\n', first + 2) : -1;
    const from = second < 0 ? first : second;
    // The block is flat once indexOf has read it, so the slice is a view, and === compares it with memcmp:
    // a third faster than endsWith.
    for (const seen of this.heads) if (seen.length === head.length - from && head.slice(from) === seen) return seen;
    // A copy, flattened: a slice of the block would hold the whole block, request id and all.
    const text = flat('\r\n' + head.slice(from + 2));
    this.heads = [text, ...this.heads.slice(0, RECENT_TEXTS - 1)];
    return text;
  }
}

// How many recent header texts of each kind SharedTexts compares a new one with: the clients of a test
// run are few. A cache size, not a bound of what an entry keeps: no entry shows it, so it is not in
// fixtures/limits.json.
const RECENT_TEXTS = 8;

// The fields every record has (possibly undefined); the others are left out when absent.
const BASE_FIELDS = new Set([
  'requestId',
  'time',
  'method',
  'path',
  'operation',
  'keyLabel',
  'status',
  'latencyMs',
  'errorCode',
  'details',
  'fault',
  'stream',
  'retryCount',
  'model',
]);

// Header names hold no colon and values no line break (the HTTP parser refuses both): one line per header.
// Joined rather than concatenated: one flat string, not a tree of a dozen pieces (see flat()).
function headerText(headers: RequestDetail['headers']): string {
  const parts: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) parts.push(name, ': ', Array.isArray(value) ? value.join(', ') : String(value), '\n');
  }
  return parts.join('');
}

function headersFromText(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(': ');
    if (colon > 0) out[line.slice(0, colon)] = line.slice(colon + 2);
  }
  return out;
}

// What the columns keep of a slot: its numbers, its texts that outlive a request (shared with earlier
// records, or the mock's own), and the texts each request makes anew, as UTF-16 code units.
const enum Num {
  Time,
  Latency,
  Status,
  Created,
  PromptTokens,
  Count,
}
const enum Ref {
  Method,
  Path,
  Operation,
  KeyLabel,
  ErrorCode,
  Model,
  RequestHeaders,
  ResponseHead,
  AnswerModel,
  AnswerFingerprint,
  Completion,
  Count,
}
const enum Text {
  RequestId,
  RequestBody,
  Response,
  Details,
  Count,
}
/** Whether a slot holds an entry, and what its response was: none, a text (kept), or a chat answer's recipe (its id kept). */
const enum Sent {
  Free,
  None,
  Text,
  Recipe,
}
// Characters of texts a slot keeps (the request id, the request body, the response text or answer id, a
// 400's details as JSON), as UTF-16 code units, so that any text comes back exactly; a record whose texts
// need more is kept as an Unread object. A cache size no entry shows, so it is not in fixtures/limits.json.
const SLOT_CHARS = 1024;

/**
 * Whether JSON gives `details` back exactly: a list of plain objects whose values are texts, null, booleans
 * or finite numbers (not -0). The details of the mock's own errors are; anything else is kept as it is.
 */
function jsonExact(details: readonly unknown[]): boolean {
  if (!Array.isArray(details)) return false;
  for (const d of details) {
    if (d === null || typeof d !== 'object' || Object.getPrototypeOf(d) !== Object.prototype) return false;
    for (const name in d) {
      const v = (d as Record<string, unknown>)[name];
      if (typeof v === 'string' || v === null || typeof v === 'boolean') continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || Object.is(v, -0)) return false;
    }
  }
  return true;
}

/**
 * Unread entries of the common kind (no rare field but a 400's details, short texts, no response or a JSON
 * text or a chat answer's recipe), held in columns rather than as objects. Under load the ring holds the
 * last thousand requests, which live just long enough to be copied out of V8's young generation, and then
 * die in the old one: an object per entry, with its request id, body and answer id as strings of their
 * own, cost more than the rest of the journal's work. Here a request adds no object the journal holds:
 * its numbers go into a Float64Array, the texts it made anew are copied into its slot of one buffer (as
 * UTF-16 code units, which give any text back exactly), and the texts that repeat (method, path, model,
 * header texts, the completion) are held by reference, the path and model shared with the last record's
 * when they are the same. Reading a slot makes the record again, field for field.
 */
class Columns {
  private readonly numbers: Float64Array;
  private readonly lengths: Int32Array;
  private readonly refs: unknown[];
  private readonly sent: Uint8Array;
  /** The slots' bytes, made when first needed: a journal that never records costs nothing. */
  private bytes: Buffer | undefined;
  /** The path and model name of the last record: the next one most likely has the same, and keeps that copy. */
  private lastPath = '';
  private lastModel = '';

  constructor(capacity: number) {
    this.numbers = new Float64Array(capacity * Num.Count);
    this.lengths = new Int32Array(capacity * Text.Count);
    this.refs = new Array<unknown>(capacity * Ref.Count).fill(undefined);
    this.sent = new Uint8Array(capacity);
  }

  /** Holds `r` in slot `i` and returns true, or returns false (changing nothing) when it is not of the common kind. */
  put(i: number, r: RequestRecord, texts: SharedTexts): boolean {
    if (hasRare(r, false) || (r.details !== undefined && !jsonExact(r.details))) return false;
    const details = r.details === undefined ? undefined : JSON.stringify(r.details);
    const body = r.request?.body;
    const response = r.responseBody;
    let answer: CompletionText | undefined;
    let responseText: string | undefined;
    if (response instanceof CompletionText) answer = response;
    else if (typeof response === 'string') responseText = response;
    else if (response !== undefined) return false;
    const id = r.requestId;
    const sentText = answer ? answer.id : responseText;
    const size = id.length + (body?.length ?? 0) + (sentText?.length ?? 0) + (details?.length ?? 0);
    if (size > SLOT_CHARS) return false;

    const bytes = (this.bytes ??= Buffer.allocUnsafeSlow(this.sent.length * SLOT_CHARS * 2));
    let at = i * SLOT_CHARS * 2;
    const lengths = i * Text.Count;
    at += bytes.write(id, at, 'utf16le');
    this.lengths[lengths + Text.RequestId] = id.length;
    if (body !== undefined) at += bytes.write(body, at, 'utf16le');
    this.lengths[lengths + Text.RequestBody] = body === undefined ? -1 : body.length;
    if (sentText !== undefined) at += bytes.write(sentText, at, 'utf16le');
    this.lengths[lengths + Text.Response] = sentText === undefined ? -1 : sentText.length;
    if (details !== undefined) bytes.write(details, at, 'utf16le');
    this.lengths[lengths + Text.Details] = details === undefined ? -1 : details.length;
    this.sent[i] = answer ? Sent.Recipe : responseText !== undefined ? Sent.Text : Sent.None;

    const n = i * Num.Count;
    this.numbers[n + Num.Time] = r.time;
    this.numbers[n + Num.Latency] = r.latencyMs;
    this.numbers[n + Num.Status] = r.status;
    this.numbers[n + Num.Created] = answer ? answer.created : 0;
    this.numbers[n + Num.PromptTokens] = answer ? answer.promptTokens : 0;

    const refs = this.refs;
    const k = i * Ref.Count;
    refs[k + Ref.Method] = r.method;
    refs[k + Ref.Path] = r.path === this.lastPath ? this.lastPath : (this.lastPath = r.path);
    refs[k + Ref.Operation] = r.operation;
    refs[k + Ref.KeyLabel] = r.keyLabel;
    refs[k + Ref.ErrorCode] = r.errorCode;
    let model = r.model;
    if (model !== undefined) model = model === this.lastModel ? this.lastModel : (this.lastModel = model);
    refs[k + Ref.Model] = model;
    refs[k + Ref.RequestHeaders] = r.request && texts.requestHeaders(r.request.headers);
    refs[k + Ref.ResponseHead] = r.responseHead === undefined ? undefined : texts.responseHead(r.responseHead);
    // The catalogue's own texts.
    refs[k + Ref.AnswerModel] = answer?.model;
    refs[k + Ref.AnswerFingerprint] = answer?.fingerprint;
    refs[k + Ref.Completion] = answer?.result;
    return true;
  }

  /** The record held in slot `i`, made again. */
  record(i: number): RequestRecord {
    const bytes = this.bytes!;
    const lengths = i * Text.Count;
    let at = i * SLOT_CHARS * 2;
    const text = (which: Text): string | undefined => {
      const length = this.lengths[lengths + which]!;
      if (length < 0) return undefined;
      at += length * 2;
      return bytes.toString('utf16le', at - length * 2, at);
    };
    const requestId = text(Text.RequestId);
    const requestBody = text(Text.RequestBody);
    const sentText = text(Text.Response);
    const details = text(Text.Details);
    const n = i * Num.Count;
    const k = i * Ref.Count;
    const refs = this.refs;
    const sent = this.sent[i];
    const responseBody =
      sent === Sent.Recipe
        ? new CompletionText(
            { id: sentText!, created: this.numbers[n + Num.Created]!, model: refs[k + Ref.AnswerModel] as string, fingerprint: refs[k + Ref.AnswerFingerprint] as string },
            refs[k + Ref.Completion] as CompletionText['result'],
            this.numbers[n + Num.PromptTokens]!,
          )
        : sent === Sent.Text
          ? sentText
          : undefined;
    const common: Record<string, unknown> = {
      requestId,
      time: this.numbers[n + Num.Time],
      method: refs[k + Ref.Method],
      path: refs[k + Ref.Path],
      operation: refs[k + Ref.Operation],
      keyLabel: refs[k + Ref.KeyLabel],
      status: this.numbers[n + Num.Status],
      latencyMs: this.numbers[n + Num.Latency],
      errorCode: refs[k + Ref.ErrorCode],
      model: refs[k + Ref.Model],
      responseBody,
      responseHead: refs[k + Ref.ResponseHead],
    };
    const rare = details === undefined ? undefined : { details: JSON.parse(details) as unknown };
    return rebuild(common, rare, refs[k + Ref.RequestHeaders] as string | undefined, requestBody);
  }

  /** Whether slot `i` holds an entry not read yet. */
  holds(i: number): boolean {
    return this.sent[i] !== Sent.Free;
  }

  /** Frees slot `i` and lets go of what it references (its entry has been made, or replaced by an object). */
  release(i: number): void {
    this.sent[i] = Sent.Free;
    this.refs.fill(undefined, i * Ref.Count, (i + 1) * Ref.Count);
  }

  /** Lets go of everything (the journal was cleared). */
  clear(): void {
    this.sent.fill(Sent.Free);
    this.refs.fill(undefined);
    this.lastPath = '';
    this.lastModel = '';
  }
}

type Slot = JournalEntry | Unread;

// What an entry keeps of a request (the inspector shows it; memory stays bounded): the records bounds of
// fixtures/limits.json, read once.
const {
  maxPathChars: MAX_PATH,
  maxDetails: MAX_DETAILS,
  maxHeaders: MAX_HEADERS,
  maxHeaderNameChars: MAX_HEADER_NAME_CHARS,
  maxHeaderChars: MAX_HEADER_CHARS,
  maxBodyChars: MAX_BODY_CHARS,
  maxResponseBodyChars: MAX_RESPONSE_CHARS,
  maxStreamEvents: MAX_EVENTS,
  maxStreamEventChars: MAX_EVENT_CHARS,
} = packageLimits().records;
// Headers that carry a credential: their value is never kept.
const CREDENTIALS = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'cookie', 'set-cookie', 'ocp-apim-subscription-key', 'x-goog-api-key']);
// How many inspector pages may watch the journal at once: a guard on the server's work per request (each
// listener makes the entry at once), not a bound of what the journal keeps, so it stays here.
export const MAX_LISTENERS = 16;

/** A listener of new journal entries (the inspector's live feed). */
export type JournalListener = (entry: JournalEntry) => void;
// How many secret-free texts are remembered, so a client sending ever new paths cannot grow it (a cache
// size no entry shows, so not in fixtures/limits.json).
const MAX_CLEAN = 1024;

// Every string of a detail (message, param, code, ...): details quote what the client sent.
function scrubValues(value: unknown, scrub: (text: string) => string): unknown {
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) return value.map((v) => scrubValues(v, scrub));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubValues(v, scrub)]));
}

/** The headers of a header block (`HTTP/1.1 200 OK` then `Name: value` lines); a repeated name's values joined by `, `. */
export function headersFromBlock(block: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = block.split('\r\n');
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    out[name] = out[name] === undefined ? value : `${out[name]}, ${value}`;
  }
  return out;
}

/**
 * The request journal: a ring buffer of the most recent requests, so memory stays bounded however
 * many requests arrive. Admin calls are not recorded (reading the journal must not change it).
 */
export class Journal {
  private readonly ring: (Slot | undefined)[];
  private next = 0;
  private recorded = 0;
  private readonly scrub: (text: string) => string;
  private readonly scrubPath: (path: string) => string;
  private readonly clean = new Set<string>();
  private readonly texts = new SharedTexts();
  /** The unread entries of the common kind; a slot they hold is empty in `ring`. */
  private readonly columns: Columns;
  private readonly maskText = (text: string): string => this.masked(text);
  private readonly listeners = new Set<JournalListener>();

  /** `secrets` (the configured keys and admin token) are masked wherever a client put them: path, ids, body fields, messages. */
  constructor(
    readonly capacity: number,
    secrets: readonly string[] = [],
  ) {
    this.ring = new Array<Slot | undefined>(Math.max(0, capacity));
    this.columns = new Columns(Math.max(0, capacity));
    this.scrub = secretScrubber(secrets, { json: false });
    this.scrubPath = (path) => scrubPath(path, this.scrub);
  }

  /**
   * `text` masked; texts already found to hold no secret are remembered (never one that held a secret),
   * since the same few paths, operations and models come back request after request.
   */
  private masked(text: string, mask: (text: string) => string = this.scrub): string {
    if (this.clean.has(text)) return text;
    const out = mask(text);
    if (out === text && text.length <= MAX_PATH && this.clean.size < MAX_CLEAN) this.clean.add(text);
    return out;
  }

  /**
   * Adds a finished request, replacing the oldest entry when the buffer is full. Admin calls and health
   * checks are left out: a container probe every few seconds would crowd out the client's requests.
   *
   * Masking and cutting wait until the entry is read (entries(), a listener): a server under load
   * records far more requests than anyone reads, and most leave the ring unread. What is held meanwhile
   * is the record as it came, bounded: a body longer than the journal keeps is masked, cut and hashed at
   * once, so no request body is held whole.
   */
  record(r: RequestRecord): void {
    if (this.capacity <= 0 || r.path.startsWith('/__admin') || findOperation(r.operation)?.probe) return;
    const body = r.request?.body;
    const sent = r.responseBody;
    const now =
      this.listeners.size > 0 ||
      (body !== undefined && body.length > MAX_BODY_CHARS) ||
      (sent !== undefined && !isRecipe(sent) && (typeof sent !== 'string' || sent.length > MAX_RESPONSE_CHARS));
    const i = this.next;
    this.next = (i + 1) % this.capacity;
    this.recorded++;
    if (!now && this.columns.put(i, r, this.texts)) {
      this.ring[i] = undefined;
      return;
    }
    if (this.columns.holds(i)) this.columns.release(i);
    const slot: Slot = now ? this.finish(r) : new Unread(r, this.texts);
    this.ring[i] = slot;
    if (!this.listeners.size) return;
    for (const listener of this.listeners) {
      try {
        listener(slot as JournalEntry);
      } catch {
        this.listeners.delete(listener); // a broken listener must not stop the journal
      }
    }
  }

  /** The entry a record becomes: long client-supplied parts cut, secrets masked, the body's hash taken. */
  private finish(r: RequestRecord): JournalEntry {
    const opt = (s: string | undefined): string | undefined => (s === undefined ? s : this.masked(s));
    // Masked before cutting, so a cut cannot leave part of a key behind.
    const masked = this.masked(r.path, this.scrubPath);
    const path = masked.length > MAX_PATH ? `${masked.slice(0, MAX_PATH)}...` : masked;
    const requestId = this.scrub(r.requestId);
    const errorCode = typeof r.errorCode === 'string' ? this.masked(r.errorCode) : r.errorCode;
    const fault = opt(r.fault);
    const stream = opt(r.stream);
    const model = opt(r.model);
    const operation = opt(r.operation);
    const keyLabel = opt(r.keyLabel);
    // The text is the body's bytes decoded (Latin-1 when ASCII, else strict UTF-8): its UTF-8 is those bytes again.
    const body = r.request?.body;
    const bodyHash = r.bodyHash ?? (body === undefined ? undefined : createHash('sha256').update(body, 'utf8').digest('hex'));
    const same =
      path === r.path &&
      requestId === r.requestId &&
      errorCode === r.errorCode &&
      fault === r.fault &&
      stream === r.stream &&
      model === r.model &&
      operation === r.operation &&
      keyLabel === r.keyLabel &&
      bodyHash === r.bodyHash;
    // A record with nothing to mask, cut or add is kept as it is: records are never changed.
    const { responseHead, responseBody, ...rest } = r;
    const responseHeaders = responseHead === undefined ? r.responseHeaders : headersFromBlock(responseHead);
    return same && !r.details && !r.request && !responseHeaders && responseHead === undefined && responseBody === undefined && !r.sse
      ? (r as JournalEntry) // it has no response body
      : {
          ...rest,
          requestId,
          path,
          errorCode,
          fault,
          stream,
          model,
          operation,
          keyLabel,
          ...(bodyHash === undefined ? {} : { bodyHash }),
          details: r.details?.slice(0, MAX_DETAILS).map((d) => scrubValues(d, this.maskText)),
          ...(r.request ? { request: this.detailOf(r.request, keyLabel) } : {}),
          ...(responseHeaders ? { responseHeaders: this.headersOf(responseHeaders, keyLabel, 'x-request-id') } : {}),
          ...this.responseOf(responseBody),
          sse: r.sse && this.eventsOf(r.sse),
        };
  }

  /** `text` masked, then cut at `max` characters; copied when cut, so the entry keeps no large string alive through a slice. */
  private cut(text: string, max: number): string {
    // Masked with some room past the cut, so a key across the cut is masked whole.
    const masked = this.scrub(text.length > max ? text.slice(0, max + 512) : text);
    return masked.length > max ? Buffer.from(masked.slice(0, max), 'utf8').toString('utf8') : masked;
  }

  /** A response body as journalled: text masked and cut at records.maxResponseBodyChars; of a binary body, only its size. */
  private responseOf(recorded: RequestRecord['responseBody']): Pick<JournalEntry, 'responseBody' | 'responseBodyChars' | 'responseBytes'> {
    const sent = isRecipe(recorded) ? recorded.make() : recorded;
    if (sent === undefined || sent === '') return { responseBody: undefined };
    if (typeof sent !== 'string') return { responseBody: undefined, responseBytes: sent.length };
    return { responseBody: this.cut(sent, MAX_RESPONSE_CHARS), responseBodyChars: sent.length };
  }

  /** A stream's events as journalled: each masked, within the records bounds of fixtures/limits.json; `total` counts them all. */
  private eventsOf(sse: SentEvents): SentEvents {
    const events: SentEvent[] = [];
    let room = MAX_EVENT_CHARS;
    for (const e of sse.events) {
      if (events.length >= MAX_EVENTS || room <= 0) break;
      const data = this.cut(e.data, room);
      room -= data.length;
      events.push({ ms: e.ms, data });
    }
    return { events, total: Math.max(sse.total, events.length) };
  }

  /** The entry in a slot of the ring, made (once) when it is first read. */
  private entryAt(i: number): JournalEntry {
    if (this.columns.holds(i)) {
      const entry = this.finish(this.columns.record(i));
      this.columns.release(i);
      this.ring[i] = entry;
      return entry;
    }
    const slot = this.ring[i]!;
    if (!(slot instanceof Unread)) return slot;
    const entry = this.finish(slot.record());
    this.ring[i] = entry;
    return entry;
  }

  /** Headers as journalled: bounded, credentials masked (an API key shows as its masked label), secrets masked; `skip` left out (the response's x-request-id is the entry's requestId). */
  private headersOf(headers: RequestDetail['headers'], keyLabel: string | undefined, skip?: string): Record<string, string> {
    const out: Record<string, string> = {};
    let n = 0;
    for (const name in headers) {
      const value = headers[name];
      if (value === undefined || name === skip) continue;
      if (n++ >= MAX_HEADERS) break;
      // Told a credential by its whole name, so no bound on the name can let one through unmasked.
      const lower = name.toLowerCase();
      const key = lower.slice(0, MAX_HEADER_NAME_CHARS);
      if (CREDENTIALS.has(lower)) {
        out[key] = lower === 'authorization' && keyLabel ? `Bearer ${keyLabel}` : '[masked]';
        continue;
      }
      const text = this.scrub(Array.isArray(value) ? value.join(', ') : String(value));
      out[key] = text.length > MAX_HEADER_CHARS ? `${text.slice(0, MAX_HEADER_CHARS)}...` : text;
    }
    return out;
  }

  /** A request's headers and the first records.maxBodyChars of its body, masked before they are cut. */
  private detailOf(req: RequestDetail, keyLabel: string | undefined): RequestDetail {
    const headers = this.headersOf(req.headers, keyLabel);
    if (req.body === undefined || req.body === '') return { headers };
    // Masked with some room past the cut, so a key across the cut is masked whole; copied when cut, so
    // the entry does not keep a large body alive through a sliced string.
    const long = req.body.length > MAX_BODY_CHARS;
    const masked = this.scrub(long ? req.body.slice(0, MAX_BODY_CHARS + 512) : req.body);
    const body = long || masked.length > MAX_BODY_CHARS ? Buffer.from(masked.slice(0, MAX_BODY_CHARS), 'utf8').toString('utf8') : masked;
    return { headers, body, bodyChars: req.body.length };
  }

  /**
   * Calls `listener` with each new entry until the returned function is called; undefined when
   * MAX_LISTENERS are watching already. Listeners run inside record(): they must only queue the entry.
   */
  subscribe(listener: JournalListener): (() => void) | undefined {
    if (this.listeners.size >= MAX_LISTENERS) return undefined;
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
  /** True while someone follows the journal (with shared state, only then does this instance's journal record). */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  /** The entries held, oldest first. */
  entries(): JournalEntry[] {
    const held = Math.min(this.recorded, this.capacity);
    const out: JournalEntry[] = [];
    for (let i = 0; i < held; i++) out.push(this.entryAt((this.next - held + i + this.capacity) % this.capacity));
    return out;
  }

  /** Requests recorded since the last clear, including those that have left the buffer. */
  get total(): number {
    return this.recorded;
  }

  /** Empties the journal; returns how many entries it held. */
  clear(): number {
    const held = Math.min(this.recorded, this.capacity);
    this.ring.fill(undefined);
    this.columns.clear();
    this.next = 0;
    this.recorded = 0;
    return held;
  }
}
