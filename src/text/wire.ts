import { frameOf, type FrameSink, type SseEvents, type TextRecipe } from '../contract/reply.js';
import type { Completion } from './complete.js';

/** What every object of one answer shares: the same id, created time, model and fingerprint. */
type ChatHead = { id: string; created: number; model: string; fingerprint: string };

// The detail objects real responses carry in usage; the mock's counts there are all zero.
const PROMPT_DETAILS = { cached_tokens: 0, audio_tokens: 0 } as const;
const COMPLETION_DETAILS = {
  reasoning_tokens: 0,
  audio_tokens: 0,
  accepted_prediction_tokens: 0,
  rejected_prediction_tokens: 0,
} as const;

/** OpenAI's usage object: the three counts plus the detail objects real responses carry (all zero here). */
export function usageOf(promptTokens: number, completionTokens: number) {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { ...PROMPT_DETAILS },
    completion_tokens_details: { ...COMPLETION_DETAILS },
  };
}

// The end of every usage object as JSON: its detail objects never change.
const DETAILS_JSON = `"prompt_tokens_details":${JSON.stringify(PROMPT_DETAILS)},"completion_tokens_details":${JSON.stringify(COMPLETION_DETAILS)}}`;

// An answer's choices depend on the completion alone, and completions are cached (the same reply rules
// answer request after request): serialise them once, as one flat text. A request adds its id, time,
// model, counts and fingerprint: a dozen pieces, not forty.
const choicesTexts = new WeakMap<Completion, string>();

function choicesOf(result: Completion): string {
  let text = choicesTexts.get(result);
  if (text === undefined) {
    text = [
      '"choices":[{"index":0,"message":{"role":"assistant","content":',
      JSON.stringify(result.content),
      ',"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":',
      JSON.stringify(result.finishReason),
      '}],',
    ].join('');
    choicesTexts.set(result, text);
  }
  return text;
}

/**
 * The non-streamed answer: a chat.completion object as JSON text, fields in the order the real API
 * writes them. Written as text (the same bytes JSON.stringify gives the object): serialising the nested
 * object cost more than the rest of the handler.
 */
export function completionJson(head: ChatHead, result: Completion, usage: ReturnType<typeof usageOf>): string {
  return (
    `{"id":${JSON.stringify(head.id)},"object":"chat.completion","created":${head.created},"model":${JSON.stringify(head.model)},${choicesOf(result)}` +
    `"usage":{"prompt_tokens":${usage.prompt_tokens},"completion_tokens":${usage.completion_tokens},"total_tokens":${usage.total_tokens},${DETAILS_JSON},` +
    `"service_tier":"default","system_fingerprint":${JSON.stringify(head.fingerprint)}}`
  );
}

/**
 * A chat.completion answer as a recipe: its head (id, time, model, fingerprint), the (cached, shared)
 * completion and the prompt's token count, from which `make` writes the same text completionJson wrote
 * for it. One object: the journal holds it for as long as it holds the entry.
 */
export class CompletionText implements TextRecipe, ChatHead {
  readonly id: string;
  readonly created: number;
  readonly model: string;
  readonly fingerprint: string;

  constructor(
    head: ChatHead,
    readonly result: Completion,
    readonly promptTokens: number,
  ) {
    this.id = head.id;
    this.created = head.created;
    this.model = head.model;
    this.fingerprint = head.fingerprint;
  }

  make(): string {
    return completionJson(this, this.result, usageOf(this.promptTokens, this.result.completionTokens));
  }
}

// The choices of a completion's text events depend on the completion alone, and completions are cached
// (the same reply rules answer request after request): serialise each piece once, not once per request.
const deltaTexts = new WeakMap<Completion, string[]>();

// The end of a text event's frame, after the request's head: the delta, the tail and the blank line, as bytes, by the
// event's tail (with include_usage or without). Shared by every stream of the completion.
const TAILS = [',"usage":null}', '}'] as const;
const frameEnds = TAILS.map(() => new WeakMap<Completion, Buffer[]>());

function frameEndsOf(result: Completion, tail: (typeof TAILS)[number]): Buffer[] {
  const cache = frameEnds[TAILS.indexOf(tail)]!;
  let ends = cache.get(result);
  if (!ends) {
    ends = deltasOf(result).map((d) => Buffer.from(`${d}${tail}\n\n`));
    cache.set(result, ends);
  }
  return ends;
}

function deltasOf(result: Completion): string[] {
  let deltas = deltaTexts.get(result);
  if (!deltas) {
    deltas = result.pieces.map(
      (p) => `[{"index":0,"delta":{"content":${JSON.stringify(p.text)}},"logprobs":null,"finish_reason":null}]`,
    );
    deltaTexts.set(result, deltas);
  }
  return deltas;
}

// The choices of the first event, which names the role.
const ROLE_DELTA =
  '[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}]';

/**
 * The streamed answer as chat.completion.chunk events: the role first, then one event per piece of text,
 * then an empty delta with the finish reason, and with include_usage a last event with `choices: []` and the usage.
 * Each event's text is made when it is read (written, or read from the journal): the request holds its prefix,
 * nothing per event.
 */
class ChunkEvents implements SseEvents {
  readonly length: number;
  private readonly deltas: string[];
  /** How many characters the prefix has (what `chars` counts). */
  private readonly prefixChars: number;
  /** The prefix as text, until the head is made: then it is read back from the head's bytes (held once, not twice). */
  private prefix: string | undefined;
  /**
   * `data: ` and the prefix as bytes, and the ends of the completion's text events (see frameEndsOf): made with the
   * first text event's frame, so that a frame is two pieces the writer's chunk takes. The head is a block of its own,
   * not a slice of Node's 8 KiB pool, which the stream would keep alive for its seconds.
   */
  private head: Buffer | undefined = undefined;
  private ends: Buffer[] = [];

  constructor(
    /** The shared start of every event: id, object, created, model, tier, fingerprint, then `"choices":`. */
    prefix: string,
    /** With include_usage every chunk carries "usage": null until the last one; without it the key is absent. */
    private readonly tail: (typeof TAILS)[number],
    private readonly result: Completion,
    /** The last event, with the usage, when include_usage asked for it. */
    private readonly usageEvent: string | undefined,
  ) {
    this.deltas = deltasOf(result);
    this.length = this.deltas.length + (usageEvent ? 3 : 2);
    this.prefix = prefix;
    this.prefixChars = prefix.length;
  }

  data(i: number): string {
    const n = this.deltas.length;
    const prefix = this.prefix ?? this.head!.toString('utf8', DATA.length);
    if (i === 0) return prefix + ROLE_DELTA + this.tail;
    if (i <= n) return prefix + this.deltas[i - 1]! + this.tail;
    if (i === n + 1) return `${prefix}${finishDelta(this.result)}${this.tail}`;
    return this.usageEvent!;
  }

  chars(i: number): number {
    const n = this.deltas.length;
    const around = this.prefixChars + this.tail.length;
    if (i === 0) return around + ROLE_DELTA.length;
    if (i <= n) return around + this.deltas[i - 1]!.length;
    if (i === n + 1) return around + finishDelta(this.result).length;
    return this.usageEvent!.length;
  }

  tokens(i: number): number {
    return i >= 1 && i <= this.deltas.length ? this.result.pieces[i - 1]!.tokens : 0;
  }

  /** A text event's frame is two pieces of bytes made before: the request's head and the (shared) end. */
  frame(i: number, into: FrameSink): void {
    if (i < 1 || i > this.deltas.length) return into.put(frameOf(this.data(i)));
    if (this.head === undefined) {
      this.head = ownBytes(DATA + this.prefix!);
      this.prefix = undefined;
      this.ends = frameEndsOf(this.result, this.tail);
    }
    into.put(this.head);
    into.put(this.ends[i - 1]!);
  }
}

/** A text's UTF-8 in a memory block of its own. */
function ownBytes(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

const DATA = 'data: ';

const finishDelta = (result: Completion): string =>
  `[{"index":0,"delta":{},"logprobs":null,"finish_reason":${JSON.stringify(result.finishReason)}}]`;

/** The streamed answer's events (see ChunkEvents). */
export function chunkEvents(
  head: ChatHead,
  result: Completion,
  usage: ReturnType<typeof usageOf>,
  includeUsage: boolean,
): SseEvents {
  const tail = TAILS[includeUsage ? 0 : 1];
  const prefix = `${JSON.stringify({ id: head.id, object: 'chat.completion.chunk', created: head.created, model: head.model, service_tier: 'default', system_fingerprint: head.fingerprint }).slice(0, -1)},"choices":`;
  return new ChunkEvents(
    prefix,
    tail,
    result,
    includeUsage ? `${prefix}[],"usage":${JSON.stringify(usage)}}` : undefined,
  );
}
