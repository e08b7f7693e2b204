import { windowMsOf } from '../domain/config.js';
import type { Handler } from '../pipeline/handler.js';

/** GET /v1/me: the calling key, masked, with its scopes, rate limit and usage; never the key itself. */
export const me: Handler = ({ key }) => {
  const k = key!;
  const limit = k.config.rateLimit;
  return {
    kind: 'json',
    body: {
      object: 'api_key',
      label: k.masked,
      name: k.config.name ?? null,
      scopes: k.config.scopes ?? [],
      rate_limit: limit
        ? {
            requests: limit.requests,
            window_ms: windowMsOf(limit),
            ...(limit.tokensPerMinute ? { tokens_per_minute: limit.tokensPerMinute } : {}),
          }
        : null,
      usage: { requests: k.usage.requests, by_operation: { ...k.usage.byOperation } },
    },
  };
};

/** GET /v1/models (and /text-provider/models): the catalogue in OpenAI's list shape. */
export const listModels: Handler = ({ services }) => ({
  kind: 'json',
  body: {
    object: 'list',
    data: services.catalogue.models.map((m) => ({
      id: m.id,
      object: 'model',
      created: m.created,
      owned_by: m.owned_by,
    })),
  },
});
