import { countChatPromptTokens, type CountableMessage } from '../../text/tokenizer.js';
import type { Reply } from '../../contract/reply.js';
import type { Services } from '../services.js';

type Usage = { total_tokens?: unknown };

/**
 * Tokens a finished chat reply used, for the tokens-per-minute limit: the usage it reports, or for a
 * stream without a usage chunk, its streamed tokens plus the prompt counted with the model's tokenizer.
 */
export function tokensOf(
  reply: Reply | undefined,
  body: Record<string, unknown> | undefined,
  services: Services,
): number {
  if (!reply) return 0;
  if (reply.kind === 'json') return reply.tokens ?? 0;
  if (reply.kind !== 'sse') return 0;
  const { events } = reply;
  const last = events.length > 0 ? events.data(events.length - 1) : undefined;
  if (last?.includes('"usage":{')) {
    const total = (JSON.parse(last) as { usage?: Usage }).usage?.total_tokens;
    if (typeof total === 'number') return total;
  }
  let streamed = 0;
  for (let i = 0; i < events.length; i++) streamed += events.tokens(i);
  // Counted by the handler already (counting a long prompt again would hold the event loop).
  if (reply.usage) return streamed + reply.usage.promptTokens;
  const model = services.catalogue.models.find((m) => m.id === body?.model);
  const messages = Array.isArray(body?.messages) ? (body.messages as CountableMessage[]) : [];
  return streamed + countChatPromptTokens(messages, model?.limits.tokenizer ?? 'cl100k_base');
}
