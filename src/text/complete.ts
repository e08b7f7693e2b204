import { decodePieces, encode, type Encoding, type Piece } from './tokenizer.js';

/** Input to completeText: the full reply plus the request's limits. */
export type CompleteInput = {
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
  /** Stream deltas: non-empty whole characters whose texts join to content and whose token counts add up to completionTokens. */
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
    // Exactly maxTokens tokens even when the last one ends mid-character; that tail decodes to U+FFFD, as tiktoken's decode does.
    const pieces = decodePieces(tokens.slice(0, maxTokens), input.encoding);
    return { content: join(pieces), finishReason: 'length', completionTokens: maxTokens, pieces };
  }
  const pieces = decodePieces(tokens, input.encoding);
  // Joining the pieces (rather than reusing text) keeps content and stream byte-identical by construction.
  return { content: join(pieces), finishReason: 'stop', completionTokens: tokens.length, pieces };
}
