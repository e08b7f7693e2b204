/**
 * A record not read yet, held as plain fields (see Unread), and the record made again from them. Which
 * fields it holds where comes from the field table (journal/record.ts): the code that copies them is made
 * once, at load, from the table's names.
 */
import type { RecordedBody, RequestRecord } from './record.js';
import { ALWAYS_FIELDS, FIELDS, RARE_FIELDS, RECORD_FIELDS } from './record.js';
import { flattenString } from '../../lib/internals.js';
import { headersFromText, type SharedTexts } from './texts.js';

// The fields an unread record keeps by code of its own: the request (its headers as one shared text, its
// body; its bodyChars among the rare fields), the response's head (shared) and body (flattened).
const OWN = new Set<string>(['request', 'responseHead', 'responseBody']);
/** The fields most records have, copied as they are. */
const COMMON_FIELDS = RECORD_FIELDS.filter((name) => !FIELDS[name].rare && !OWN.has(name));

// Straight-line code made from the table's names: a loop over the names would make each read of a record
// a keyed lookup, on the path every request takes. The names are the table's own identifiers.
for (const name of RECORD_FIELDS)
  if (!/^[A-Za-z_$][\w$]*$/.test(name)) throw new Error(`record field '${name}' is not an identifier`);
const made = <T>(...code: string[]): T => new Function(...code) as T;

/** Whether a record has any of the fields most requests lack; `details` apart, with `withDetails` false (the column
 * store keeps a 400's details). */
export const hasRare: (r: RequestRecord, withDetails?: boolean) => boolean = made(
  'r',
  'withDetails = true',
  `return (withDetails && r.details !== undefined) || r.request?.bodyChars !== undefined${RARE_FIELDS.filter(
    (n) => n !== 'details',
  )
    .map((n) => ` || r.${n} !== undefined`)
    .join('')};`,
);

/** The rare fields of a record, and its request's bodyChars, in an object of their own. */
const rareOf: (r: RequestRecord) => Record<string, unknown> = made(
  'r',
  `return { ${RARE_FIELDS.map((n) => `${n}: r.${n}, `).join('')}requestBodyChars: r.request === undefined ? undefined : r.request.bodyChars };`,
);

/** Copies the common fields of `r` onto `to`, always in the same order (so every unread record has one shape). */
const copyCommon: (to: object, r: RequestRecord) => void = made(
  'to',
  'r',
  COMMON_FIELDS.map((n) => `to.${n} = r.${n};`).join('\n'),
);

/**
 * A record not read yet: it becomes its entry (masked, cut, hashed) when first read. It is held as one
 * object of plain fields with the request's headers as one text, not as the record's tree of objects:
 * the ring holds the last thousand requests, which under load live just long enough to be copied out
 * of V8's young generation and then die in the old one, and a tree of a dozen objects per request cost
 * a quarter of the CPU of a chat completion in garbage collection. For the same reason the fields most
 * requests do not have (a fault, a stream, violations, ...) sit in a second object, absent for most:
 * every field of the entry is copied with it.
 */
export class Unread {
  // Declared, not defined: the constructor gives every field its value once, the common ones first.
  declare private readonly requestHeaders: string | undefined;
  declare private readonly requestBody: string | undefined;
  declare private readonly responseHead: string | undefined;
  declare private readonly responseBody: RecordedBody | undefined;
  /** The fields most requests do not have, in an object of their own (none for most entries). */
  declare private readonly rare: Record<string, unknown> | undefined;

  constructor(r: RequestRecord, texts: SharedTexts) {
    copyCommon(this, r);
    this.requestHeaders = r.request && texts.requestHeaders(r.request.headers);
    this.requestBody = r.request?.body;
    this.responseHead = r.responseHead === undefined ? undefined : texts.responseHead(r.responseHead);
    this.responseBody = flattenString(r.responseBody);
    // The writer's events by reference (among the rare fields): most of their pieces are shared by every event of the
    // stream.
    this.rare = hasRare(r) ? rareOf(r) : undefined;
  }

  /** The record again, with only the fields it had (an absent optional field stays absent), in the record's order. */
  record(): RequestRecord {
    return rebuild(this as unknown as Record<string, unknown>, this.rare, this.requestHeaders, this.requestBody);
  }
}

/**
 * A record made again from what an unread entry kept: `common` holds the fields by their record names
 * (requestHeaders and requestBody apart), `rare` the fields most records lack. Only the fields the record
 * had (an absent optional field stays absent), in the record's order.
 */
export function rebuild(
  common: Record<string, unknown>,
  rare: Record<string, unknown> | undefined,
  requestHeaders: string | undefined,
  requestBody: string | undefined,
): RequestRecord {
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
    const value = FIELDS[name].rare ? rare?.[name] : common[name];
    if (value !== undefined || ALWAYS_FIELDS.has(name)) out[name] = value;
  }
  return out as unknown as RequestRecord;
}
