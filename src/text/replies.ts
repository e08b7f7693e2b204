import { sha256 } from '../lib/ids.js';
import { REQUEST_TEXTS, kept } from '../lib/memo.js';

/** A reply rule as written in a rules file (see schemas/reply-rules.json). */
export type ReplyRule = {
  id: string;
  match: { exact?: string; contains?: string; regex?: string; flags?: string; model?: string };
  reply: string;
};

/** A reply rule with its regular expression compiled once. */
export type CompiledRule = {
  id: string;
  exact?: string;
  contains?: string;
  regex?: RegExp;
  model?: string;
  reply: string;
};

/** What selectReply looks at: the conversation, the requested model and an optional rule id from a header. */
type ReplyInput = {
  messages: ReadonlyArray<{ role: string; content: string }>;
  model: string;
  ruleId?: string;
};

/** The chosen reply text and the id of the rule that produced it. */
type ReplyChoice = { text: string; ruleId: string };

/** Returned instead of a reply when a header names a rule that does not exist. */
type UnknownRule = { error: 'unknown_rule'; ruleId: string };

/** Id reported when no rule matched and the built-in fallback reply was used. */
export const DEFAULT_RULE_ID = 'default';

/** Compiles rules in order; throws an Error naming the rule id for a bad regex, bad flags or an empty match. */
export function compileRules(rules: readonly ReplyRule[]): CompiledRule[] {
  return rules.map((rule) => {
    const { exact, contains, regex, flags = '', model } = rule.match;
    if (exact === undefined && contains === undefined && regex === undefined) {
      throw new Error(`reply rule "${rule.id}": match needs at least one of exact, contains or regex`);
    }
    if (rule.reply === '') throw new Error(`reply rule "${rule.id}": reply must not be empty`);
    // g and y make RegExp.test stateful (lastIndex), so the same message could match only every other time.
    if (!/^[imsu]*$/.test(flags))
      throw new Error(`reply rule "${rule.id}": unsupported regex flags "${flags}" (allowed: i, m, s, u)`);
    let compiled: RegExp | undefined;
    if (regex !== undefined) {
      try {
        compiled = new RegExp(regex, flags);
      } catch (err) {
        throw new Error(`reply rule "${rule.id}": invalid regex /${regex}/${flags}: ${(err as Error).message}`);
      }
    }
    return { id: rule.id, exact, contains, regex: compiled, model, reply: rule.reply };
  });
}

function matches(rule: CompiledRule, text: string, model: string): boolean {
  if (rule.model !== undefined && rule.model !== model) return false;
  // Clients often send a trailing newline; "exact" is about the words, not the padding.
  if (rule.exact !== undefined && text.trim() !== rule.exact) return false;
  if (rule.contains !== undefined && !text.includes(rule.contains)) return false;
  if (rule.regex !== undefined && !rule.regex.test(text)) return false;
  return true;
}

/**
 * Picks the reply for a request: a rule named by ruleId, else the first rule matching the last user message, else the
 * default reply.
 */
export function selectReply(rules: readonly CompiledRule[], input: ReplyInput): ReplyChoice | UnknownRule {
  if (input.ruleId !== undefined) {
    // An explicit pick ignores the match conditions: the header is an override for tests.
    const picked = rules.find((r) => r.id === input.ruleId);
    if (picked) return { text: picked.reply, ruleId: picked.id };
    if (input.ruleId === DEFAULT_RULE_ID) return { text: defaultReply(input), ruleId: DEFAULT_RULE_ID };
    return { error: 'unknown_rule', ruleId: input.ruleId };
  }
  const lastUser = lastUserText(input.messages);
  if (lastUser !== undefined) {
    const hit = rules.find((r) => matches(r, lastUser, input.model));
    if (hit) return { text: hit.reply, ruleId: hit.id };
  }
  return { text: defaultReply(input), ruleId: DEFAULT_RULE_ID };
}

function lastUserText(messages: ReplyInput['messages']): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'user') return messages[i]!.content;
  }
  return undefined;
}

const OPENERS = ['You wrote: "{q}".', 'About "{q}":', 'Thanks for your message, "{q}".', 'You asked: "{q}".'];
const NO_TEXT_OPENERS = [
  'Hello! I did not find any user text in this conversation.',
  'There is no question from you yet, so here is a general reply.',
  'I could not find a user message to respond to.',
];
const MIDDLES = [
  'This is a mock reply, so the same conversation always receives exactly the same answer.',
  'I am a deterministic stand-in for a real model: nothing was generated, but the response format is faithful.',
  'No reply rule matched, so the mock server composed this default answer instead.',
  'The wording of this answer comes from a fixed set of sentences chosen by a hash of the conversation.',
];
const CLOSERS = [
  'Add a reply rule if you need a specific answer.',
  'Ask for a long answer to get a multi-paragraph reply.',
  'Send "ping" to get a one-word reply.',
  'Feel free to ask something else.',
];

// Budget in UTF-8 bytes, not characters: every token covers at least one byte,
// so the quote adds at most this many tokens whatever the script (CJK, emoji).
const QUOTE_MAX_BYTES = 48;

/** Shortens a message for quoting: whitespace collapsed, at most QUOTE_MAX_BYTES UTF-8 bytes, whole code points, "..."
 * when cut. */
export function shortenForQuote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (Buffer.byteLength(flat, 'utf8') <= QUOTE_MAX_BYTES) return flat;
  let out = '';
  let bytes = 0;
  for (const cp of flat) {
    const size = Buffer.byteLength(cp, 'utf8');
    if (bytes + size > QUOTE_MAX_BYTES - 3) break;
    out += cp;
    bytes += size;
  }
  // Prefer ending on a word boundary when one is reasonably close to the cut.
  const space = out.lastIndexOf(' ');
  if (space >= out.length / 2) out = out.slice(0, space);
  return `${out.trimEnd()}...`;
}

// Clients send the same conversation again (a retry, a snapshot test, a load test): the default reply
// of a conversation is kept, keyed by the text its sentences are chosen from, so a repeat costs one
// lookup instead of a hash and the quoting, and is the same string each time (the completion cache
// downstream then finds it at once). Bounded as every memo of request texts is (lib/memo.ts).
const replies = kept<string>(REQUEST_TEXTS.entries, REQUEST_TEXTS.keyChars);

function defaultReply(input: ReplyInput): string {
  // Stable across runs and processes: sentence choice depends only on the request content.
  const source = JSON.stringify([input.model, input.messages.map((m) => [m.role, m.content])]);
  return replies(source, () => composeDefault(input, source));
}

function composeDefault(input: ReplyInput, source: string): string {
  const digest = sha256(source);
  const pick = <T>(list: readonly T[], byte: number): T => list[digest[byte]! % list.length]!;
  const last = lastUserText(input.messages);
  const quote = last === undefined ? '' : shortenForQuote(last);
  const opener = quote === '' ? pick(NO_TEXT_OPENERS, 0) : pick(OPENERS, 0).replace('{q}', () => quote);
  return `${opener} ${pick(MIDDLES, 1)} ${pick(CLOSERS, 2)}`;
}
