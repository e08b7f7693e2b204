import { completionLimitParam } from '../contract/completionLimit.js';
import { ApiError, ERRORS } from '../contract/errors.js';
import { digest, hexFrom, idOf } from '../lib/ids.js';
import { REQUEST_TEXTS, kept } from '../lib/memo.js';
import { pacingOf } from '../text/pacing.js';
import { DEFAULT_RULE_ID, selectReply } from '../text/replies.js';
import { countChatPromptTokens, countChatPromptTokensPaused } from '../text/tokenizer.js';
import { CompletionText, chunkEvents, usageOf } from '../text/wire.js';
import type { Model } from '../domain/catalogue.js';
import type { Handler, HandlerRequest } from '../pipeline/handler.js';
import type { Reply } from '../contract/reply.js';

/** The header that picks a reply rule by id for one request, e.g. `X-Mock-Reply-Rule: long`. */
const RULE_HEADER = 'x-mock-reply-rule';

type Message = { role: string; content: string; name?: string };

// A model's fingerprint is a pure function of its id, and the ids are the catalogue's: a memo bounded by it.
const fingerprints = new Map<string, string>();

/** The system fingerprint of a model: fp_ and ten hex digits derived from its id. */
function fingerprintOf(model: string): string {
  let fp = fingerprints.get(model);
  if (!fp) fingerprints.set(model, (fp = `fp_${hexFrom(digest(model), 10)}`));
  return fp;
}

// A request body sent again (a retry, a snapshot test, a load test) gets the same id, and a SHA-256 of the
// body was the largest single cost of a chat completion: the ids of recent bodies are kept, keyed by the
// body's text, so a repeat costs one lookup (bounded as every memo of request texts is).
const makeChatId = (raw: string): string => idOf('chatcmpl-', 29, 'chat.completions', raw);
const chatIds = kept<string>(REQUEST_TEXTS.entries, REQUEST_TEXTS.keyChars);

/** The chat.completion id of a request body: chatcmpl- and 29 letters and digits derived from its text. */
export const chatIdOf = (raw: string): string => chatIds(raw, makeChatId);

/**
 * The completion limit of a request: max_completion_tokens (the newer name) or max_tokens, checked against the model.
 */
function maxTokensOf(body: Record<string, unknown>, model: Model): number | undefined {
  const param = completionLimitParam(body);
  const value = body[param] as number | undefined;
  const ceiling = model.limits.max_output_tokens;
  if (value !== undefined && ceiling !== undefined && value > ceiling) {
    // Wording and code as the real API answers an oversized limit.
    throw new ApiError(ERRORS.VALIDATION, {
      param,
      code: 'invalid_value',
      message: `${param} is too large: ${value}. This model supports at most ${ceiling} completion tokens, whereas you provided ${value}.`,
    });
  }
  return value;
}

/**
 * Characters of a prompt counted at once; a longer prompt is counted with pauses that let other requests through (a
 * few MB of text take seconds to count). The ones of an ordinary chat are counted at once, as fast as ever.
 */
export const LONG_PROMPT_CHARS = 16_384;

const promptChars = (messages: readonly Message[]): number =>
  messages.reduce((n, m) => n + m.role.length + m.content.length + (m.name?.length ?? 0), 0);

/** POST /text-provider/chat/completions: OpenAI's chat.completion, or chat.completion.chunk events when streamed. */
export const chatCompletions: Handler = (req) => {
  const { body } = req;
  const model = req.plan.model!; // checked once, before the handler (pipeline/plan.ts)
  const maxTokens = maxTokensOf(body, model);
  const messages = body.messages as Message[];
  const encoding = model.limits.tokenizer ?? 'cl100k_base';
  if (promptChars(messages) <= LONG_PROMPT_CHARS)
    return answer(req, model, maxTokens, countChatPromptTokens(messages, encoding));
  // Past twice the context window the exact count says nothing more: it stops there (a prompt of random words of a
  // few MB is millions of tokens, seconds of CPU and tens of MB of garbage to count whole).
  const window = model.limits.context_window;
  const stop = window === undefined ? Infinity : 2 * window;
  return countChatPromptTokensPaused(messages, encoding, undefined, stop).then((n) =>
    answer(req, model, maxTokens, n, n > stop ? stop : undefined),
  );
};

/** The answer to a chat request whose prompt counts `promptTokens` (or more than `countedTo`, where the count stopped). */
function answer(
  { body, raw, headers, services, plan }: HandlerRequest,
  model: Model,
  maxTokens: number | undefined,
  promptTokens: number,
  countedTo?: number,
): Reply {
  const messages = body.messages as Message[];
  const encoding = model.limits.tokenizer ?? 'cl100k_base';
  const window = model.limits.context_window;
  if (window !== undefined && promptTokens > window) {
    throw new ApiError(ERRORS.VALIDATION, {
      param: 'messages',
      code: 'context_length_exceeded',
      message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${countedTo === undefined ? promptTokens : `more than ${countedTo}`} tokens. Please reduce the length of the messages.`,
    });
  }
  // With control headers off (--no-fault-headers) no header changes a response: rules choose by the messages alone.
  const controls = services.config.faultHeaders;
  const ruleHeader = controls ? headers[RULE_HEADER] : undefined;
  const ruleId = typeof ruleHeader === 'string' ? ruleHeader : undefined;
  const selected = selectReply(services.replyRules, { messages, model: model.id, ruleId });
  if ('error' in selected) {
    throw new ApiError(ERRORS.UNKNOWN_REPLY_RULE, {
      param: RULE_HEADER,
      message: `No reply rule with id '${selected.ruleId.slice(0, services.limits.messages.maxQuotedChars)}' (header ${RULE_HEADER}).`,
    });
  }
  // The default reply quotes the question: a configured key in it comes back masked, as everywhere else.
  const text = selected.ruleId === DEFAULT_RULE_ID ? services.secrets.text(selected.text) : selected.text;
  // Sampling parameters (temperature, top_p, seed) are validated but change nothing: same request, same reply.
  const result = services.completions.get({ text, maxTokens, stop: body.stop as string[] | undefined, encoding });
  const usage = usageOf(promptTokens, result.completionTokens);
  const counted = { promptTokens, completionTokens: result.completionTokens };
  const head = {
    // The raw body differs between a streamed and a plain request, so their ids differ, as they do on the real API.
    id: chatIdOf(raw),
    created: services.now(),
    model: model.id,
    fingerprint: fingerprintOf(model.id),
  };
  // Tells the caller which rule answered, for debugging rule files; clients ignore unknown headers.
  const replyHeaders = { [RULE_HEADER]: selected.ruleId };
  if (body.stream !== true) {
    const recipe = new CompletionText(head, result, promptTokens);
    return {
      kind: 'json',
      body: recipe.make(),
      recipe,
      tokens: usage.total_tokens,
      headers: replyHeaders,
      usage: counted,
    };
  }
  const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  return {
    kind: 'sse',
    events: chunkEvents(head, result, usage, includeUsage),
    ending: 'done',
    // The header's ttft and tps over the server's pacing (none with control headers off: the plan reads none).
    pacing: pacingOf(services.config.pacing, plan.pacing),
    headers: replyHeaders,
    usage: counted,
  };
}
