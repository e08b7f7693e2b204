/**
 * What a record becomes in the journal: toEntry masks every configured secret, then cuts long
 * client-supplied parts to the records bounds of fixtures/limits.json, and takes the request body's hash.
 * The in-memory journal and the Redis store both make their entries here. The fields it masks or keeps as
 * they are come from the field table (journal/record.ts); the ones with code of their own ('own') are below.
 */
import { createHash } from 'node:crypto';
import { findOperation } from '../../contract/operations.js';
import { updateWithText } from '../../lib/ids.js';
import { isRecipe } from '../../contract/reply.js';
import type { Limits } from '../limits.js';
import { scrubPath, secretScrubber } from '../secrets.js';
import {
  MASKED_FIELDS,
  SCRUBBED_FIELDS,
  type EntryRequest,
  type JournalEntry,
  type RequestDetail,
  type RequestRecord,
  type SentEvent,
  type SentEvents,
} from './record.js';

// Headers that carry a credential: their value is never kept.
const CREDENTIALS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'cookie',
  'set-cookie',
  'ocp-apim-subscription-key',
  'x-goog-api-key',
]);
// How many secret-free texts are remembered, so a client sending ever new paths cannot grow it (a cache
// size no entry shows, so not in fixtures/limits.json).
const MAX_CLEAN = 1024;

/** Whether a record belongs in the journal: admin calls and health checks do not (a container probe every few seconds
 * would crowd out the client's requests). */
export function journalled(r: RequestRecord): boolean {
  return !r.path.startsWith('/__admin') && !findOperation(r.operation)?.probe;
}

/** What an entry keeps of a request (the inspector shows it; memory stays bounded): the records bounds of
 * fixtures/limits.json. */
export type RecordBounds = Limits['records'];

/**
 * The configured secrets (keys, admin token), masked wherever a client put them: path, ids, body fields,
 * messages; and the records bounds an entry is cut to, as the server's checked limits give them.
 */
export class Masking {
  readonly scrub: (text: string) => string;
  readonly scrubPath: (path: string) => string;
  private readonly clean = new Set<string>();
  readonly maskText = (text: string): string => this.masked(text);

  constructor(
    readonly bounds: RecordBounds,
    secrets: readonly string[] = [],
  ) {
    this.scrub = secretScrubber(secrets, { json: false });
    this.scrubPath = (path) => scrubPath(path, this.scrub);
  }

  /**
   * `text` masked; texts already found to hold no secret are remembered (never one that held a secret),
   * since the same few paths, operations and models come back request after request.
   */
  masked(text: string, mask: (text: string) => string = this.scrub): string {
    if (this.clean.has(text)) return text;
    const out = mask(text);
    if (out === text && text.length <= this.bounds.maxPathChars && this.clean.size < MAX_CLEAN) this.clean.add(text);
    return out;
  }
}

/**
 * The entry a record becomes: secrets masked first, then long client-supplied parts cut (so a cut cannot
 * leave part of a key behind), the body's hash taken. The record's fields keep their order; the fields an
 * entry adds (bodyHash, the response's headers read from its head, the body's size) come after. A record
 * with nothing to mask, cut or add is the entry itself: records are never changed.
 */
export function toEntry(r: RequestRecord, masking: Masking): JournalEntry {
  const { responseHead, responseBody, ...rest } = r;
  const out = rest as Record<string, unknown>;
  const record = r as unknown as Record<string, unknown>;
  let same = true;
  for (const name of SCRUBBED_FIELDS) {
    const value = record[name];
    const masked = typeof value === 'string' ? masking.scrub(value) : value;
    same &&= masked === value;
    out[name] = masked;
  }
  // Masked before cutting, so a cut cannot leave part of a key behind.
  const path = masking.masked(r.path, masking.scrubPath);
  const { maxPathChars, maxDetails, maxResponseBodyChars } = masking.bounds;
  out.path = path.length > maxPathChars ? `${path.slice(0, maxPathChars)}...` : path;
  same &&= out.path === r.path;
  for (const name of MASKED_FIELDS) {
    const value = record[name];
    const masked = typeof value === 'string' ? masking.masked(value) : value;
    same &&= masked === value;
    out[name] = masked;
  }
  // The text is the body's bytes decoded (Latin-1 when ASCII, else strict UTF-8): its UTF-8 is those bytes again.
  const body = r.request?.body;
  const bodyHash =
    r.bodyHash ?? (body === undefined ? undefined : updateWithText(createHash('sha256'), body).digest('hex'));
  const responseHeaders = responseHead === undefined ? r.responseHeaders : headersFromBlock(responseHead);
  if (
    same &&
    bodyHash === r.bodyHash &&
    !r.details &&
    !r.request &&
    !responseHeaders &&
    responseHead === undefined &&
    responseBody === undefined &&
    !r.sse
  ) {
    return r as JournalEntry; // it has no response body
  }
  const keyLabel = out.keyLabel as string | undefined;
  if (bodyHash !== undefined) out.bodyHash = bodyHash;
  out.details = r.details?.slice(0, maxDetails).map((d) => scrubValues(d, masking.maskText));
  if (r.request) out.request = detailOf(r.request, keyLabel, masking);
  if (responseHeaders) out.responseHeaders = headersOf(responseHeaders, keyLabel, masking, 'x-request-id');
  // A response body as journalled: text masked and cut at records.maxResponseBodyChars; of a binary body, only its
  // size.
  const sent = isRecipe(responseBody) ? responseBody.make() : responseBody;
  out.responseBody = undefined;
  if (typeof sent === 'string' && sent !== '') {
    out.responseBody = cut(sent, maxResponseBodyChars, masking);
    out.responseBodyChars = sent.length;
  } else if (sent !== undefined && typeof sent !== 'string') {
    out.responseBytes = sent.length;
  }
  out.sse = r.sse && eventsOf(r.sse, masking);
  return out as JournalEntry;
}

// Every string of a detail (message, param, code, ...): details quote what the client sent.
function scrubValues(value: unknown, scrub: (text: string) => string): unknown {
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) return value.map((v) => scrubValues(v, scrub));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubValues(v, scrub)]));
}

/**
 * The headers of a header block (`HTTP/1.1 200 OK` then `Name: value` lines); a repeated name's values joined by `, `.
 */
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

/** `text` masked, then cut at `max` characters; copied when cut, so the entry keeps no large string alive through a
 * slice. */
function cut(text: string, max: number, masking: Masking): string {
  // Masked with some room past the cut, so a key across the cut is masked whole.
  const masked = masking.scrub(text.length > max ? text.slice(0, max + 512) : text);
  return masked.length > max ? Buffer.from(masked.slice(0, max), 'utf8').toString('utf8') : masked;
}

/** A stream's events as journalled: each masked, within the records bounds of fixtures/limits.json; `total` counts them
 * all. */
function eventsOf(sse: SentEvents, masking: Masking): SentEvents {
  const events: SentEvent[] = [];
  const { maxStreamEvents, maxStreamEventChars } = masking.bounds;
  let room = maxStreamEventChars;
  for (const e of sse.events) {
    if (events.length >= maxStreamEvents || room <= 0) break;
    const data = cut(e.data, room, masking);
    room -= data.length;
    events.push({ ms: e.ms, data });
  }
  return { events, total: Math.max(sse.total, events.length) };
}

/** Headers as journalled: bounded, credentials masked (an API key shows as its masked label), secrets masked; `skip`
 * left out (the response's x-request-id is the entry's requestId). */
function headersOf(
  headers: RequestDetail['headers'],
  keyLabel: string | undefined,
  masking: Masking,
  skip?: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  const { maxHeaders, maxHeaderNameChars, maxHeaderChars } = masking.bounds;
  let n = 0;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || name === skip) continue;
    if (n++ >= maxHeaders) break;
    // Told a credential by its whole name, so no bound on the name can let one through unmasked.
    const lower = name.toLowerCase();
    const key = lower.slice(0, maxHeaderNameChars);
    if (CREDENTIALS.has(lower)) {
      out[key] = lower === 'authorization' && keyLabel ? `Bearer ${keyLabel}` : '[masked]';
      continue;
    }
    const text = masking.scrub(Array.isArray(value) ? value.join(', ') : String(value));
    out[key] = text.length > maxHeaderChars ? `${text.slice(0, maxHeaderChars)}...` : text;
  }
  return out;
}

/** A request's headers and the first records.maxBodyChars of its body, masked before they are cut. */
function detailOf(req: RequestDetail, keyLabel: string | undefined, masking: Masking): EntryRequest {
  const headers = headersOf(req.headers, keyLabel, masking);
  if (req.body === undefined || req.body === '') return { headers };
  // Masked with some room past the cut, so a key across the cut is masked whole; copied when cut, so
  // the entry does not keep a large body alive through a sliced string.
  const max = masking.bounds.maxBodyChars;
  const long = req.body.length > max;
  const masked = masking.scrub(long ? req.body.slice(0, max + 512) : req.body);
  const body = long || masked.length > max ? Buffer.from(masked.slice(0, max), 'utf8').toString('utf8') : masked;
  return { headers, body, bodyChars: req.body.length };
}
