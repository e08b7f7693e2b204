import type { ServerResponse } from 'node:http';
import { ApiError, ERRORS } from '../contract/errors.js';
import { formatDuration, type Admission, type LimitView } from '../domain/rateLimits/limiter.js';
import { tokensOf } from '../domain/rateLimits/tokens.js';
import type { KeyState } from '../domain/keys.js';
import type { Services } from '../domain/services.js';
import { addHeader } from './requestContext.js';
import type { RequestState, Step, StepResult } from './steps.js';

function setLimitHeaders(res: ServerResponse, state: RequestState, kind: 'requests' | 'tokens', view: LimitView): void {
  addHeader(res, state, `x-ratelimit-limit-${kind}`, String(view.limit));
  addHeader(res, state, `x-ratelimit-remaining-${kind}`, String(view.remaining));
  addHeader(res, state, `x-ratelimit-reset-${kind}`, formatDuration(view.resetMs));
}

/** The 429 for a refused request, in OpenAI's words, with the wait in retry-after and retry-after-ms. */
function tooMany(key: KeyState, a: Admission): ApiError {
  const kind = a.refused!;
  const view = kind === 'requests' ? a.requests : a.tokens!;
  const wait = Math.max(1, Math.ceil(view.resetMs));
  const used = kind === 'requests' ? `Used ${view.limit}, Requested 1` : `Used ${a.tokensUsed}`;
  const what = kind === 'requests' ? 'requests' : 'tokens per min (TPM)';
  return new ApiError(ERRORS.RATE_LIMITED, {
    type: kind,
    message: `Rate limit reached for ${what} on key ${key.masked}: Limit ${view.limit}, ${used}. Please try again in ${formatDuration(wait)}.`,
    headers: { 'retry-after': String(Math.ceil(wait / 1000)), 'retry-after-ms': String(wait) },
  });
}

/**
 * Per-key limits from the configuration: every response to a limited key carries x-ratelimit-*
 * headers, and a request over the limit is a 429 that says when to come back.
 */
export function rateLimit(services: Services): Step {
  return function rateLimit(ctx, state) {
    const key = state.key;
    if (!key?.config.rateLimit) return;
    const countsTokens = state.operation!.countsTokens === true;
    const admission = services.state.admit(key, countsTokens);
    // In memory the decision is made at once; shared state (Redis) answers with a Promise.
    if (admission instanceof Promise) return admission.then((a) => decide(ctx.res, state, key, a!, services));
    return decide(ctx.res, state, key, admission!, services);
  };
}

function decide(
  res: ServerResponse,
  state: RequestState,
  key: KeyState,
  admission: Admission,
  services: Services,
): StepResult {
  setLimitHeaders(res, state, 'requests', admission.requests);
  if (admission.tokens) setLimitHeaders(res, state, 'tokens', admission.tokens);
  if (admission.refused) return tooMany(key, admission);
  if (!admission.tokens) return;
  // Tokens are charged once the reply is known.
  return () => {
    const used = tokensOf(state.reply, state.body, services);
    const after = services.state.charge(key, used);
    if (after instanceof Promise)
      return after.then((view) => void (view && !res.headersSent && setLimitHeaders(res, state, 'tokens', view)));
    if (after) setLimitHeaders(res, state, 'tokens', after);
  };
}
