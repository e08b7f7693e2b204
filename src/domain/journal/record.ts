/**
 * The request record, defined once. FIELDS below lists every field of a finished request's record, in the
 * order the server lists them (pipeline/requestContext.ts), with its type as recorded and as journalled and
 * how the journal keeps it. From it come the record's type (RequestRecord), a journal entry's
 * (JournalEntry), the JSON of an entry as the admin API and the events feed give it and the Redis store
 * holds it (EntryJson, which the inspector's page reads), and the lists the journal's storage works from.
 *
 * Adding a recorded field is a row here, `name: drafted(optional<Type>('kept'))` (or 'masked' for a text a client may
 * have put a secret in), and the line of the pipeline that sets `state.name` (RequestState extends RecordDraft, and
 * the record copies every drafted field), plus its sample in test/domain/journalRecord.test.ts. A field the record
 * works out when the request ends (a rounding, a header read) is a row without `drafted` and its line in
 * reportRequest (pipeline/requestContext.ts) instead. A new field is rare
 * (most requests lack it): an unread entry keeps it apart, and the column store leaves a record that has
 * it to an object. Only a field most requests have is worth columns of its own (journal/columns.ts).
 *
 * This file is read by the inspector's type check too (a browser bundle, without Node's types): it imports
 * nothing and names no Node type.
 */

/** How a journal entry shows a field. */
type EntryRule =
  /** As recorded. */
  | 'kept'
  /** A text (or null) with every configured secret masked; one seen to hold none is remembered, as the same few come
   * back request after request. */
  | 'masked'
  /** A text with every configured secret masked, not remembered: it is new with each request. */
  | 'scrubbed'
  /** Made by code of its own in journal/entry.ts (cut to a bound, made from other fields). */
  | 'own'
  /** Never part of an entry. */
  | 'none';

/** One field of the record: its type as recorded (R) and as journalled (E), whether every record has it (A), and how
 * the journal keeps it. */
export interface Field<R, E, A extends boolean, D extends boolean = boolean> {
  /**
   * Every record has the field (possibly undefined), and so does every entry; an optional one is left out when absent.
   */
  readonly always: A;
  /** Most records lack it: an unread entry keeps it apart, and the column store takes no record that has it. */
  readonly rare: boolean;
  readonly entry: EntryRule;
  /** Part of the record draft (RecordDraft): the pipeline sets it on the request's state as it answers, under the
   * field's name, and the record takes it from there as it is. */
  readonly draft: D;
  /** Types only: never set. */
  readonly recorded?: R;
  readonly journalled?: E;
}

/** A field every record has (possibly undefined). */
const always = <R, E = R>(entry: EntryRule, rare = false): Field<R, E, true, false> => ({
  always: true,
  rare,
  entry,
  draft: false,
});
/** A field a record has only when it applies; rare unless said otherwise. */
const optional = <R, E = R>(entry: EntryRule, rare = true): Field<R, E, false, false> => ({
  always: false,
  rare,
  entry,
  draft: false,
});
/** The same field, set by the pipeline on the request's state (RecordDraft) and recorded as it is. */
const drafted = <R, E, A extends boolean>(field: Field<R, E, A, false>): Field<R, E, A, true> => ({
  ...field,
  draft: true,
});

/** Headers as a request or response had them (Node's shape). */
export type Headers = Readonly<Record<string, string | number | readonly string[] | undefined>>;

/**
 * The request's headers and body text. As recorded: what the server had. As journalled (EntryRequest):
 * within the records bounds of fixtures/limits.json (maxHeaders headers, names of maxHeaderNameChars and
 * values of maxHeaderChars characters, the body's first maxBodyChars), credential headers masked, every
 * configured secret masked (`bodyChars` is the whole body's length, so a cut shows).
 */
export interface RequestDetail {
  readonly headers: Headers;
  readonly body?: string;
  readonly bodyChars?: number;
}
/** A request as journalled (see RequestDetail). */
export interface EntryRequest {
  readonly headers: Readonly<Record<string, string>>;
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
  /** The most an event was late against the stream's schedule, in ms, when it kept one (pipeline/sse.ts StreamLog). */
  readonly worstLateMs?: number;
}

/** One departure from the API seen by the validating proxy: the rule (`response.status`, `request.schema`, ...), what
 * it wants, what came. */
export interface Violation {
  readonly rule: string;
  readonly expected: string;
  readonly actual: string;
}

/**
 * A response body as recorded: the JSON text written, or (for a short one) its recipe, which makes the text
 * again when the entry is read (contract/reply.ts's TextRecipe, named here by its shape), or the binary body.
 */
export type RecordedBody = string | Uint8Array | { make(): string };

/** Every field of the record, in the record's order. */
export const FIELDS = {
  requestId: always<string>('scrubbed'),
  time: always<number>('kept'),
  method: always<string>('kept'),
  /** Masked, then cut at records.maxPathChars (then `...`). */
  path: always<string>('own'),
  operation: always<string | undefined>('masked'),
  keyLabel: always<string | undefined>('masked'),
  status: always<number>('kept'),
  latencyMs: always<number>('kept'),
  errorCode: always<string | null | undefined>('masked'),
  /** The error's details (a 400's violations): at most records.maxDetails, every text in them masked. */
  details: always<readonly unknown[] | undefined>('own', true),
  fault: drafted(always<string | undefined>('masked', true)),
  stream: drafted(always<string | undefined>('masked', true)),
  retryCount: always<number | undefined>('kept', true),
  model: always<string | undefined>('masked'),
  /**
   * The response's body. As recorded: see RecordedBody (references, never copies). As journalled: a text
   * body's first records.maxResponseBodyChars characters with every configured secret masked; a binary body
   * is left out (its size is `responseBytes`; the inspector reads the bytes from GET /__admin/requests/:id/body).
   */
  responseBody: drafted(optional<RecordedBody, string>('own', false)),
  /** A streamed answer's events as written, with their times; journalled masked, at most records.maxStreamEvents events
   * and records.maxStreamEventChars characters of their text. */
  sse: drafted(optional<SentEvents>('own')),
  /** A stream that kept time (paced, or replayed at its recorded pace): how late its latest event was written
   * against its schedule, in ms to a tenth; the first event's schedule is the request's arrival plus the time to first token. */
  streamLateMs: optional<number>('kept'),
  /** The latency profile the request was answered with (docs/load-testing.md), when one was in force. */
  profile: drafted(optional<string>('masked')),
  /** How long the request waited for one of its model's slots (a profile's maxRunning), in ms to a tenth. */
  queuedMs: optional<number>('kept'),
  /** A chat answer's prompt and completion tokens (its usage), for the tokens /metrics counts. */
  promptTokens: optional<number>('kept', false),
  completionTokens: optional<number>('kept', false),
  /** Body fields the request schema does not list, accepted and ignored: JSON pointers, masked, at most
   * requests.maxIgnoredFields (then `...`). */
  ignoredFields: drafted(optional<readonly string[]>('kept')),
  /** The wait the answer asked for, in ms (its `retry-after-ms`), when it carried one: a 429, or a fault with a retry
   * hint. */
  retryAfterMs: optional<number>('kept'),
  /** What the validating proxy found wrong with the request or the upstream's answer (absent when nothing). */
  violations: drafted(optional<readonly Violation[]>('kept')),
  /** The request as it came, for the inspector; journalled bounded and masked (see RequestDetail). */
  request: optional<RequestDetail, EntryRequest>('own', false),
  /**
   * The response's header block as written to the socket (status line, then `Name: value` lines), a record
   * may carry instead of responseHeaders: the text exists already, and the journal reads it only when the
   * entry is read. Never part of a journal entry.
   */
  responseHead: optional<string, never>('none', false),
  /** The response's headers as sent (journalled bounded and masked, without x-request-id, which is the entry's
   * requestId). */
  responseHeaders: optional<Headers, Readonly<Record<string, string>>>('own'),
  /** SHA-256 (hex) of the request body's bytes, when a body was read: shows whether a retry resent the same request.
   * The journal adds it (from request.body). */
  bodyHash: optional<string>('own'),
  /** As journalled: the whole text body's length in characters, so a cut body shows as cut. */
  responseBodyChars: optional<number>('own'),
  /** As journalled: a binary body's size in bytes. */
  responseBytes: optional<number>('own'),
} as const;

type Fields = typeof FIELDS;
/** The name of a field of the record. */
export type FieldName = keyof Fields;
type AlwaysName = { [K in FieldName]: Fields[K] extends Field<unknown, unknown, true> ? K : never }[FieldName];
type OptionalName = Exclude<FieldName, AlwaysName>;
type DraftName = { [K in FieldName]: Fields[K] extends Field<unknown, unknown, boolean, true> ? K : never }[FieldName];
type InEntry<K extends FieldName> = Fields[K] extends Field<unknown, never, boolean> ? never : K;
type Recorded<K extends FieldName> = Fields[K] extends Field<infer R, unknown, boolean> ? R : never;
type Journalled<K extends FieldName> = Fields[K] extends Field<unknown, infer E, boolean> ? E : never;
type Flat<T> = { [K in keyof T]: T[K] };

/** What is known about one finished request; observers (journal, log) receive it. */
export type RequestRecord = Flat<
  { readonly [K in AlwaysName]: Recorded<K> } & { readonly [K in OptionalName]?: Recorded<K> }
>;

/**
 * The record draft: the fields the pipeline sets on a request's state as it answers (RequestState extends it), each
 * recorded as it is when the request ends (pipeline/requestContext.ts reportRequest copies every DRAFT_FIELDS name).
 */
export type RecordDraft = { -readonly [K in DraftName]?: Recorded<K> };

/** One journal entry: a finished request, with long client-supplied parts cut to size and secrets masked. */
export type JournalEntry = Flat<
  { readonly [K in AlwaysName as InEntry<K>]: Journalled<K> } & {
    readonly [K in OptionalName as InEntry<K>]?: Journalled<K>;
  }
>;

/** A journal entry as JSON (GET /__admin/requests, the events feed, the Redis store): a field that is undefined is
 * absent. */
export type EntryJson = Flat<
  { readonly [K in keyof JournalEntry as undefined extends JournalEntry[K] ? never : K]: JournalEntry[K] } & {
    readonly [K in keyof JournalEntry as undefined extends JournalEntry[K] ? K : never]?: Exclude<
      JournalEntry[K],
      undefined
    >;
  }
>;

const NAMES = Object.keys(FIELDS) as FieldName[];
/** The record's fields in order. */
export const RECORD_FIELDS: readonly FieldName[] = NAMES;
/** The fields every record has (possibly undefined); the others are left out when absent. */
export const ALWAYS_FIELDS: ReadonlySet<string> = new Set(NAMES.filter((name) => FIELDS[name].always));
/** The fields of the record draft, in the record's order. */
export const DRAFT_FIELDS: readonly DraftName[] = NAMES.filter((name): name is DraftName => FIELDS[name].draft);
/** A draft with every field there and unset, so every request's state has one object shape. */
export const EMPTY_DRAFT: { readonly [K in DraftName]: undefined } = Object.freeze(
  Object.fromEntries(DRAFT_FIELDS.map((name) => [name, undefined])) as { [K in DraftName]: undefined },
);
/** The fields most records lack. */
export const RARE_FIELDS: readonly FieldName[] = NAMES.filter((name) => FIELDS[name].rare);
/** The fields an entry shows as a masked text, remembered when clean ('masked'), or not ('scrubbed'). */
export const MASKED_FIELDS: readonly FieldName[] = NAMES.filter((name) => FIELDS[name].entry === 'masked');
export const SCRUBBED_FIELDS: readonly FieldName[] = NAMES.filter((name) => FIELDS[name].entry === 'scrubbed');
