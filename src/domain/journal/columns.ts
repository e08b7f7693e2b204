/**
 * Unread journal entries of the common kind, in columns (see Columns). The fields it stores are the
 * table's common ones (journal/record.ts: not rare) and a 400's details; a field made common there needs a
 * column here too (test/domain/journalRecord.test.ts checks each comes back).
 */
import { CompletionText } from '../../text/wire.js';
import type { RequestRecord } from './record.js';
import type { SharedTexts } from './texts.js';
import { hasRare, rebuild } from './unread.js';

// What the columns keep of a slot: its numbers, its texts that outlive a request (shared with earlier
// records, or the mock's own), and the texts each request makes anew, as UTF-16 code units.
const enum Num {
  Time,
  Latency,
  Status,
  Created,
  PromptTokens,
  /** The record's promptTokens and completionTokens (NaN when it has none). */
  UsedPrompt,
  UsedCompletion,
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
/** Whether a slot holds an entry, and what its response was: none, a text (kept), or a chat answer's recipe (its id
 * kept). */
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
export class Columns {
  private readonly numbers: Float64Array;
  private readonly lengths: Int32Array;
  private readonly refs: unknown[];
  private readonly sent: Uint8Array;
  /** The slots' bytes, made when first needed: a journal that never records costs nothing. */
  private bytes: Buffer | undefined;
  /** The path and model name of the last record: the next one most likely has the same, and keeps that copy. */
  private lastPath = '';
  private lastModel = '';
  /** The details of the last 400 kept and their JSON: a refusal answered again (validate keeps them) has the same. */
  private lastDetails: readonly unknown[] | undefined;
  private lastDetailsJson = '';

  constructor(capacity: number) {
    this.numbers = new Float64Array(capacity * Num.Count);
    this.lengths = new Int32Array(capacity * Text.Count);
    this.refs = new Array<unknown>(capacity * Ref.Count).fill(undefined);
    this.sent = new Uint8Array(capacity);
  }

  /** Holds `r` in slot `i` and returns true, or returns false (changing nothing) when it is not of the common kind. */
  put(i: number, r: RequestRecord, texts: SharedTexts): boolean {
    if (hasRare(r, false)) return false;
    let details: string | undefined;
    if (r.details === undefined) details = undefined;
    else if (r.details === this.lastDetails) details = this.lastDetailsJson;
    else {
      if (!jsonExact(r.details)) return false;
      details = JSON.stringify(r.details);
      this.lastDetails = r.details;
      this.lastDetailsJson = details;
    }
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
    this.numbers[n + Num.UsedPrompt] = r.promptTokens ?? Number.NaN;
    this.numbers[n + Num.UsedCompletion] = r.completionTokens ?? Number.NaN;

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
            {
              id: sentText!,
              created: this.numbers[n + Num.Created]!,
              model: refs[k + Ref.AnswerModel] as string,
              fingerprint: refs[k + Ref.AnswerFingerprint] as string,
            },
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
    const usedPrompt = this.numbers[n + Num.UsedPrompt]!;
    const usedCompletion = this.numbers[n + Num.UsedCompletion]!;
    if (!Number.isNaN(usedPrompt)) common.promptTokens = usedPrompt;
    if (!Number.isNaN(usedCompletion)) common.completionTokens = usedCompletion;
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
