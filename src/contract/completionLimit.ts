/**
 * Which field of a chat request bounds the tokens an answer may generate: `max_completion_tokens`
 * (the newer name) when the request has it, else `max_tokens`. The mock enforces the bound through it,
 * and the conformance runner checks a target's `usage` against the same field.
 */
export const completionLimitParam = (
  body: Readonly<Record<string, unknown>>,
): 'max_completion_tokens' | 'max_tokens' =>
  body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
