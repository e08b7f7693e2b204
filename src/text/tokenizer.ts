import { requireCjs } from '../lib/require.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type * as EncodingModule from 'gpt-tokenizer/encoding/o200k_base';
import type { GptEncoding } from 'gpt-tokenizer/GptEncoding';
import { Recent } from '../lib/memo.js';
import { RankIndex } from './rankIndex.js';
import { readRanks, type Ranks } from './ranks.js';
import { RankTable } from './rankTable.js';
import { slices } from './slices.js';

/** Names of the tiktoken encodings the mock can count with. */
export type Encoding = 'o200k_base' | 'cl100k_base';

/** One chat message as the prompt counter sees it (content already flattened to text). */
export type CountableMessage = { role: string; content: string; name?: string };

type Loaded = {
  api: Pick<typeof EncodingModule, 'encode' | 'encodeGenerator' | 'countTokens' | 'setMergeCacheSize'>;
  /** Each token's text, or its raw bytes when they are not valid UTF-8 alone, by id (rankTable.ts). */
  table: RankTable;
  /** The encoder's own pre-tokenizer pattern, so long pieces are found exactly where it finds them. */
  split: RegExp;
};

// require (lib/require.ts) gives a synchronous, on-demand load: each encoding table is several
// megabytes, so it is only parsed the first time it is used.
const loaded = new Map<Encoding, Loaded>();
/** The tables as read (ranks.ts), from the step that reads them to the step that builds their encoder. */
const read = new Map<Encoding, Ranks>();
/** The encodings the catalogue's models use; the build keeps a JSON copy of each one's table (ranks.ts). */
export const ENCODINGS: readonly Encoding[] = ['o200k_base', 'cl100k_base'];
const MERGE_CACHE_SIZE = 10_000;

// Treat special-token text such as "<|endoftext|>" in user input as ordinary
// text (tiktoken's encode_ordinary) instead of letting the library throw.
const ORDINARY = { disallowedSpecial: new Set<string>() };

// Never used with { stream: true }, so no partial bytes leak between calls;
// gpt-tokenizer's own decode() shares a streaming decoder and does leak them.
const utf8 = new TextDecoder('utf-8');

/** The rank table of an encoding as read, until its encoder is built. */
function readTable(enc: Encoding): Ranks | undefined {
  if (loaded.has(enc)) return undefined;
  let ranks = read.get(enc);
  // Encoding names come from a JSON catalogue, so check before building a file or module path.
  if (!ranks && !ENCODINGS.includes(enc)) throw new Error(`unknown encoding: ${String(enc)}`);
  if (!ranks) read.set(enc, (ranks = readRanks(enc)));
  return ranks;
}

/** Where gpt-tokenizer's encoder keeps the tables it was built with. */
type Core = {
  bytePairStringRankEncoder?: { get(text: string): number | undefined; readonly size: number };
  bytePairRankDecoder?: Ranks;
};
const coreOf = (api: Loaded['api']): Core | undefined =>
  (api as { bytePairEncodingCoreProcessor?: Core }).bytePairEncodingCoreProcessor;

/**
 * Gives the encoder the compact table in place of what it keeps of the token texts: a RankIndex for its Map from a
 * token's text to its id (the only use the encoder makes of that Map being get()), and the table behind an array's
 * face for the array it was built over, which only its own decode reads (the mock decodes with decodePieces). False,
 * and nothing swapped, when the library keeps its lookup elsewhere or holds texts in it.
 */
function compactTables(api: Loaded['api'], given: Ranks, table: RankTable): boolean {
  const core = coreOf(api);
  const map = core?.bytePairStringRankEncoder;
  if (!(map instanceof Map) || map.size !== 0 || core!.bytePairRankDecoder !== given) return false;
  core!.bytePairStringRankEncoder = new RankIndex(table);
  core!.bytePairRankDecoder = table.arrayFace();
  return true;
}

/** What the encoder of an encoding looks a token's text up in, and the table its decode reads (for tests). */
export const encoderTables = (enc: Encoding): Core | undefined => ({ ...coreOf(load(enc).api) });

/** The compact rank table of an encoding (for tests). */
export const rankTable = (enc: Encoding): RankTable => load(enc).table;

/** What the package's gpt-tokenizer/encoding/<name> module does, over the given table. */
function encoderOver(enc: Encoding, ranks: Ranks): Loaded['api'] {
  const { GptEncoding: Encoder } = requireCjs('gpt-tokenizer/GptEncoding') as { GptEncoding: typeof GptEncoding };
  const api: Loaded['api'] = Encoder.getEncodingApi(enc, () => ranks as Array<string | number[]>);
  // The library caches up to 100,000 merged pieces; pieces here reach 512 characters, so many distinct
  // long inputs could hold hundreds of MB. A smaller cache keeps memory bounded at little cost.
  api.setMergeCacheSize(MERGE_CACHE_SIZE);
  return api;
}

/**
 * Builds the encoder of an encoding and the compact table (rankTable.ts) that takes the place of its table as read,
 * which is garbage after. The encoder is built over the byte tokens alone, at their ids: built over every token, it
 * would fill a Map with the 200,000 texts (7 MiB, then swapped for the RankIndex) and list every id with Object.keys,
 * garbage that raised the peak RSS of a server under load and took 40% of the build's time. (Its vocabularySize, which
 * the mock never reads, then counts only those.) Should the library keep its texts elsewhere, it is built over every
 * token, as the package builds it.
 */
export function buildEncoder(enc: Encoding, ranks: Ranks): Loaded {
  const table = new RankTable(ranks);
  const bytesOnly = new Array<Ranks[number]>(ranks.length);
  for (let id = 0; id < ranks.length; id++) if (table.isBytes(id)) bytesOnly[id] = ranks[id];
  let api = encoderOver(enc, bytesOnly);
  if (!compactTables(api, bytesOnly, table)) api = encoderOver(enc, ranks);
  const patterns = requireCjs('gpt-tokenizer/encodingParams/constants') as Record<string, RegExp>;
  const split = patterns[enc === 'o200k_base' ? 'O200K_TOKEN_SPLIT_REGEX' : 'CL100K_TOKEN_SPLIT_REGEX'];
  if (!(split instanceof RegExp)) throw new Error(`gpt-tokenizer has no split pattern for ${enc}`);
  return { api, table, split };
}

function load(enc: Encoding): Loaded {
  const hit = loaded.get(enc);
  if (hit) return hit;
  const entry = buildEncoder(enc, readTable(enc)!);
  loaded.set(enc, entry);
  read.delete(enc);
  return entry;
}

/**
 * Loading encodings, as separate steps (parse the rank table, build the encoder) of 50 to 180 ms of
 * CPU each: run apart, a request in between waits for one step at most. Loads are cached, so a step whose
 * part is already loaded costs nothing. By default only o200k_base, the gpt-4o family's, which clients
 * ask for most: a table adds about 20 MiB of RSS (cl100k_base 16), so the others load on their first use instead.
 */
export function loadSteps(encodings: readonly Encoding[] = ['o200k_base']): Array<() => void> {
  return encodings.flatMap((enc) => [() => void readTable(enc), () => void load(enc)]);
}

/**
 * Encodes text to token ids with the given encoding; runs longer than MAX_PIECE are encoded in slices (see slices.ts).
 */
export function encode(text: string, enc: Encoding): number[] {
  const { api, split } = load(enc);
  const parts = slices(text, split);
  if (parts.length === 1) return api.encode(text, ORDINARY);
  const tokens: number[] = [];
  for (const part of parts) for (const t of api.encode(part, ORDINARY)) tokens.push(t);
  return tokens;
}

/** Counts the tokens of a text without materialising the token array; agrees with encode().length. */
export function countTokens(text: string, enc: Encoding): number {
  const { api, split } = load(enc);
  let total = 0;
  for (const part of slices(text, split)) total += api.countTokens(part, ORDINARY);
  return total;
}

// True when the buffer ends after a complete UTF-8 sequence; malformed tails
// also count as "complete" so a bad sequence is flushed (as U+FFFD) rather than buffered forever.
function endsOnCharBoundary(bytes: readonly number[]): boolean {
  const n = bytes.length;
  for (let back = 1; back <= Math.min(4, n); back++) {
    const b = bytes[n - back]!;
    if ((b & 0xc0) === 0x80) continue;
    const need = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : b < 0xf8 ? 4 : 1;
    return back >= need;
  }
  return true;
}

/** A run of decoded text and the number of tokens it came from. */
export type Piece = { text: string; tokens: number };

/**
 * Decodes tokens into consecutive text pieces, one per token except that tokens ending mid-character are grouped with
 * what follows.
 * The pieces' token counts add up to tokens.length, so a stream paced in tokens per second stays exact.
 */
export function decodePieces(tokens: readonly number[], enc: Encoding): Piece[] {
  const { table } = load(enc);
  const pieces: Piece[] = [];
  let pending: number[] = [];
  let count = 0;
  const push = (text: string): void => {
    pieces.push({ text, tokens: count });
    count = 0;
  };
  const flush = (): void => {
    const text = utf8.decode(Uint8Array.from(pending));
    pending = [];
    push(text);
  };
  for (const token of tokens) {
    const text = table.text(token);
    if (text !== undefined) {
      // A text token starts on a character boundary, so bytes still pending are malformed: emit them as they decode.
      if (pending.length > 0) flush();
      count++;
      push(text); // the table holds no empty text token (rankTable.ts), so pieces are never empty
      continue;
    }
    const bytes = table.bytes(token);
    if (bytes === undefined) throw new Error(`token ${token} is not an ordinary ${enc} token`);
    count++;
    for (const b of bytes) pending.push(b);
    if (endsOnCharBoundary(pending)) flush();
  }
  // Only reached when the tokens stop mid-character (a max_tokens cut): decodes to U+FFFD, like tiktoken's
  // errors="replace".
  if (pending.length > 0) flush();
  return pieces;
}

/** Decodes token ids to text; an incomplete trailing character becomes U+FFFD. */
export function decode(tokens: readonly number[], enc: Encoding): string {
  return decodePieces(tokens, enc)
    .map((p) => p.text)
    .join('');
}

// Clients send the same system prompt and the whole history again on every turn: counts of message
// texts are kept, so a turn costs the tokens of its new messages. Bounded in entries and in characters
// (a key holds its text alive), the recently used ones kept (Recent). Short texts (roles, names, short
// turns) are kept in a plain map, which is emptied when full: a lookup there costs a twentieth of
// counting "user" again.
const COUNT_CACHE = { entries: 4096, chars: 1_000_000, minChars: 16 };
const counts = new Map<Encoding, Recent<number>>();
const shortCounts = new Map<Encoding, Map<string, number>>();

function countShort(text: string, enc: Encoding): number {
  let cache = shortCounts.get(enc);
  if (!cache) shortCounts.set(enc, (cache = new Map()));
  let n = cache.get(text);
  if (n === undefined) {
    n = countTokens(text, enc);
    if (cache.size >= COUNT_CACHE.entries) cache.clear();
    cache.set(text, n);
  }
  return n;
}

/** countTokens, answered from the cache of message texts when the same text was counted before. */
export function countMessageTokens(text: string, enc: Encoding): number {
  if (text.length < COUNT_CACHE.minChars) return countShort(text, enc);
  let cache = counts.get(enc);
  if (!cache) counts.set(enc, (cache = new Recent<number>(COUNT_CACHE.entries, COUNT_CACHE.chars)));
  let n = cache.get(text);
  if (n === undefined) cache.set(text, (n = countTokens(text, enc)));
  return n;
}

/**
 * Tokens counted between two pauses of a long count: at the slowest text measured (random words, whose pieces the
 * merge cache never holds: about 160,000 tokens a second on the bench's machine) a stretch of about 25 ms.
 */
export const TOKENS_PER_TURN = 4096;

/**
 * countMessageTokens for a long text, counted piece by piece with a pause (by default a turn of the event loop) every
 * TOKENS_PER_TURN tokens, so that a prompt of megabytes does not hold every other request for seconds. Exactly the
 * count of countTokens, kept as it keeps it; or, given `stopAbove`, a count past it as soon as one is found (not kept).
 */
export async function countMessageTokensPaused(
  text: string,
  enc: Encoding,
  pause: () => Promise<unknown> = nextTurn,
  stopAbove = Infinity,
): Promise<number> {
  if (text.length < COUNT_CACHE.minChars) return countShort(text, enc);
  let cache = counts.get(enc);
  if (!cache) counts.set(enc, (cache = new Recent<number>(COUNT_CACHE.entries, COUNT_CACHE.chars)));
  const kept = cache.get(text);
  if (kept !== undefined) return kept;
  const { api, split } = load(enc);
  let total = 0;
  let due = TOKENS_PER_TURN;
  for (const part of slices(text, split)) {
    for (const tokens of api.encodeGenerator(part, ORDINARY)) {
      total += tokens.length;
      if (total > stopAbove) return total;
      if (total < due) continue;
      due = total + TOKENS_PER_TURN;
      await pause();
    }
  }
  cache.set(text, total);
  return total;
}

/**
 * countChatPromptTokens for a long prompt: its messages counted with countMessageTokensPaused. With `stopAbove`, the
 * count stops once it passes that many tokens, and the result is only known to be more than it.
 */
export async function countChatPromptTokensPaused(
  messages: readonly CountableMessage[],
  enc: Encoding,
  pause?: () => Promise<unknown>,
  stopAbove = Infinity,
): Promise<number> {
  let total = 3;
  const count = async (text: string) => countMessageTokensPaused(text, enc, pause, stopAbove - total);
  for (const m of messages) {
    total += 3;
    total += await count(m.role);
    total += await count(m.content);
    if (m.name !== undefined) total += (await count(m.name)) + 1;
    if (total > stopAbove) return total;
  }
  return total;
}

/** How many message texts have their count kept for an encoding: long ones (in Recent) and short ones. */
export const cachedCounts = (enc: Encoding): { long: number; short: number } => ({
  long: counts.get(enc)?.size ?? 0,
  short: shortCounts.get(enc)?.size ?? 0,
});

/**
 * Counts chat prompt tokens the way the OpenAI cookbook does for gpt-3.5-turbo-0125 / gpt-4 / gpt-4o:
 * 3 per message, the tokens of every value, 1 more per name, and 3 to prime the assistant reply.
 */
export function countChatPromptTokens(messages: readonly CountableMessage[], enc: Encoding): number {
  let total = 3;
  for (const m of messages) {
    total += 3 + countMessageTokens(m.role, enc) + countMessageTokens(m.content, enc);
    if (m.name !== undefined) total += countMessageTokens(m.name, enc) + 1;
  }
  return total;
}
