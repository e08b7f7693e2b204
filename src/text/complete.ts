import { Lru } from '../lib/lru.js';
import { decodePieces, encode, type Encoding, type Piece } from './tokenizer.js';

/** Input to completeText: the full reply plus the request's limits. */
type CompleteInput = {
  text: string;
  maxTokens?: number;
  stop?: readonly string[];
  encoding: Encoding;
};

/** The reply as the API returns it, plus the same text split for streaming. */
export type Completion = {
  content: string;
  finishReason: 'stop' | 'length';
  completionTokens: number;
  /** Stream deltas: non-empty whole characters whose texts join to content and whose token counts add up to
   * completionTokens. */
  pieces: Piece[];
};

const join = (pieces: readonly Piece[]): string => pieces.map((p) => p.text).join('');

/** Index of the earliest occurrence of any non-empty stop string, or -1. */
export function findStop(text: string, stop: readonly string[]): number {
  let earliest = -1;
  for (const s of stop) {
    if (s === '') continue;
    const at = text.indexOf(s);
    if (at !== -1 && (earliest === -1 || at < earliest)) earliest = at;
  }
  return earliest;
}

/**
 * Applies stop sequences and then max_tokens to a reply, the way the chat completions API reports it.
 */
export function completeText(input: CompleteInput): Completion {
  const { maxTokens } = input;
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens < 0)) {
    throw new RangeError(`maxTokens must be a non-negative integer, got ${maxTokens}`);
  }
  // The API's text never contains the stop sequence itself, so cut before it.
  const at = findStop(input.text, input.stop ?? []);
  const text = at === -1 ? input.text : input.text.slice(0, at);

  const tokens = encode(text, input.encoding);
  if (maxTokens !== undefined && tokens.length > maxTokens) {
    // Exactly maxTokens tokens even when the last one ends mid-character; that tail decodes to U+FFFD, as tiktoken's
    // decode does.
    const pieces = decodePieces(tokens.slice(0, maxTokens), input.encoding);
    return { content: join(pieces), finishReason: 'length', completionTokens: maxTokens, pieces };
  }
  const pieces = decodePieces(tokens, input.encoding);
  // Joining the pieces (rather than reusing text) keeps content and stream byte-identical by construction.
  return { content: join(pieces), finishReason: 'stop', completionTokens: tokens.length, pieces };
}

/**
 * Recent completions, made once for repeated requests: cutting and splitting a reply is a pure function
 * of its inputs, and the same reply rules answer request after request. Each table is bounded by count
 * and by bytes (a completion weighs 4 bytes per character of its key: its text, and the pieces that
 * split it). A reply with neither max_tokens nor stop (most requests) is found by its text alone, one
 * table per encoding, so a repeat costs a lookup and no key is built for it; the others are keyed by
 * all four inputs, the text by a number of its own: a key that held the text (kilobytes for a long reply)
 * would be built, hashed and compared again at every request.
 */
export class Completions {
  private readonly plain = new Map<Encoding, Lru<Completion>>();
  private readonly cut: Lru<Completion>;
  /** A number for each recent text, for the keys of `cut`. */
  private readonly textIds: Lru<number>;
  private lastId = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
  ) {
    this.cut = new Lru<Completion>(maxEntries, maxBytes);
    this.textIds = new Lru<number>(maxEntries, maxBytes);
  }

  /** The completion of `input`, made on a miss. */
  get(input: CompleteInput): Completion {
    const { text, maxTokens, stop, encoding } = input;
    const make = (): Completion => completeText(input);
    if (maxTokens === undefined && stop === undefined) {
      let table = this.plain.get(encoding);
      if (!table) this.plain.set(encoding, (table = new Lru<Completion>(this.maxEntries, this.maxBytes)));
      return table.getOrMake(text, make, () => text.length * 4);
    }
    // A text that comes back after its number was forgotten gets a new one: its old entries age out unused.
    const id = this.textIds.getOrMake(
      text,
      () => ++this.lastId,
      () => text.length * 2,
    );
    const key = JSON.stringify([id, encoding, maxTokens ?? null, stop ?? null]);
    return this.cut.getOrMake(key, make, () => (text.length + key.length) * 4);
  }
}
