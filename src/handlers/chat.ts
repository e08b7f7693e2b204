import { ApiError, ERRORS } from '../errors.js';
import { digest, hexFrom, idFrom } from '../ids.js';
import { completeText } from '../chat/complete.js';
import { selectReply, type CompiledRule } from '../chat/replies.js';
import { countChatPromptTokens, countTokens } from '../chat/tokenizer.js';
import type { Handler, SseEvent } from '../types.js';
import { pacingFor } from '../chat/pacing.js';

/** The header that picks a reply rule by id for one request. */
export const RULE_HEADER = 'x-mock-reply-rule';

type Message = { role: string; content: string; name?: string };

/** POST /text-provider/chat/completions: OpenAI's chat.completion, or chat.completion.chunk events when streamed. */
export const chatCompletions: Handler = ({ body, raw, headers, services }) => {
  const model = services.catalogue.require(body.model as string, 'text');
  const maxTokens = body.max_tokens as number | undefined;
  const ceiling = model.limits.max_output_tokens;
  if (maxTokens !== undefined && ceiling !== undefined && maxTokens > ceiling) {
    throw new ApiError(ERRORS.VALIDATION, {
      param: 'max_tokens',
      code: 'integer_above_max_value',
      message: `max_tokens is too large: ${maxTokens}. The model '${model.id}' supports at most ${ceiling} completion tokens.`,
    });
  }
  const messages = body.messages as Message[];
  const encoding = model.limits.tokenizer ?? 'cl100k_base';
  const ruleHeader = headers[RULE_HEADER];
  const ruleId = typeof ruleHeader === 'string' ? ruleHeader : undefined;
  const selected = selectReply(services.extras.replyRules as CompiledRule[], { messages, model: model.id, ruleId });
  if ('error' in selected) {
    throw new ApiError(ERRORS.UNKNOWN_REPLY_RULE, { param: RULE_HEADER, message: `No reply rule with id '${(ruleId ?? '').slice(0, 64)}' (header ${RULE_HEADER}).` });
  }
  const result = completeText({ text: selected.text, maxTokens, stop: body.stop as string[] | undefined, encoding });
  const promptTokens = countChatPromptTokens(messages, encoding);
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: result.completionTokens,
    total_tokens: promptTokens + result.completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
  const head = {
    id: idFrom(digest('chat.completions', raw), 'chatcmpl-', 29),
    created: services.now(),
    model: model.id,
  };
  const fingerprint = `fp_${hexFrom(digest(model.id), 10)}`;
  if (body.stream !== true) {
    return {
      kind: 'json',
      body: {
        id: head.id,
        object: 'chat.completion',
        created: head.created,
        model: head.model,
        choices: [{ index: 0, message: { role: 'assistant', content: result.content, refusal: null, annotations: [] }, logprobs: null, finish_reason: result.finishReason }],
        usage,
        service_tier: 'default',
        system_fingerprint: fingerprint,
      },
    };
  }
  const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    JSON.stringify({ id: head.id, object: 'chat.completion.chunk', created: head.created, model: head.model, service_tier: 'default', system_fingerprint: fingerprint, choices, ...(includeUsage ? { usage: null } : {}), ...extra });
  const events: SseEvent[] = [
    { data: chunk([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]), tokens: 0 },
    ...result.pieces.map((piece) => ({ data: chunk([{ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }]), tokens: countTokens(piece, encoding) })),
    { data: chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: result.finishReason }]), tokens: 0 },
  ];
  if (includeUsage) events.push({ data: chunk([], { usage }), tokens: 0 });
  return { kind: 'sse', events, ending: 'done', pacing: pacingFor(headers, services.config.pacing) };
};
