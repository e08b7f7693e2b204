import type { KeyState } from '../keys.js';
import type { Clock } from '../clock.js';
import { windowMsOf } from '../config.js';

// Token limits are per minute (tokensPerMinute), so their window is a minute by definition, not a setting;
// the request window is a setting (keys[].rateLimit.windowMs, its default in schemas/config.json).
const MINUTE_MS = 60_000;
const TOKEN_WINDOW_MS = MINUTE_MS;

/** One fixed window: when it started and what it has used. */
interface Window {
  start: number;
  used: number;
}

/** The state of one limit at one moment, as the x-ratelimit-* headers show it. */
export interface LimitView {
  readonly limit: number;
  readonly remaining: number;
  readonly resetMs: number;
}

/** What the limiter says about a request: allowed, or which limit refused it. */
export interface Admission {
  readonly requests: LimitView;
  readonly tokens: LimitView | undefined;
  readonly refused: 'requests' | 'tokens' | undefined;
  /** Tokens used in the current token window (for the 429 message). */
  readonly tokensUsed: number;
}

/** Go-style duration as OpenAI writes x-ratelimit-reset-*: `120ms`, `8.64s`, `6m0s`. */
export function formatDuration(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1000) return `${whole}ms`;
  const seconds = (s: number) => String(Math.round(s * 1000) / 1000);
  if (whole < MINUTE_MS) return `${seconds(whole / 1000)}s`;
  const minutes = Math.floor(whole / MINUTE_MS);
  return `${minutes}m${seconds((whole - minutes * MINUTE_MS) / 1000)}s`;
}

/**
 * Per-key fixed-window limits on requests and (for chat) tokens per minute. State is one small
 * record per configured key, so memory stays bounded however many requests or keys are tried.
 */
export class RateLimiter {
  private readonly requests = new Map<KeyState, Window>();
  private readonly tokens = new Map<KeyState, Window>();

  constructor(private readonly clock: Clock) {}

  private window(map: Map<KeyState, Window>, key: KeyState, length: number, now: number): Window {
    let w = map.get(key);
    if (!w || now - w.start >= length) {
      w = { start: now, used: 0 };
      map.set(key, w);
    }
    return w;
  }

  /** Decides on one request of a key and counts it when allowed; refused requests are not counted. */
  admit(key: KeyState, countsTokens: boolean): Admission | undefined {
    const limit = key.config.rateLimit;
    if (!limit) return undefined;
    const now = this.clock.now();
    const windowMs = windowMsOf(limit);
    const req = this.window(this.requests, key, windowMs, now);
    const tpm = countsTokens ? limit.tokensPerMinute : undefined;
    const tok = tpm === undefined ? undefined : this.window(this.tokens, key, TOKEN_WINDOW_MS, now);
    const refused =
      req.used >= limit.requests ? 'requests' : tok && tpm !== undefined && tok.used >= tpm ? 'tokens' : undefined;
    if (!refused) req.used++;
    return {
      requests: {
        limit: limit.requests,
        remaining: Math.max(0, limit.requests - req.used),
        resetMs: req.start + windowMs - now,
      },
      tokens:
        tok && tpm !== undefined
          ? { limit: tpm, remaining: Math.max(0, tpm - tok.used), resetMs: tok.start + TOKEN_WINDOW_MS - now }
          : undefined,
      refused,
      tokensUsed: tok?.used ?? 0,
    };
  }

  /** Adds the tokens a finished chat request used; returns the token limit's state after it. */
  charge(key: KeyState, tokens: number): LimitView | undefined {
    const tpm = key.config.rateLimit?.tokensPerMinute;
    if (tpm === undefined) return undefined;
    const now = this.clock.now();
    const w = this.window(this.tokens, key, TOKEN_WINDOW_MS, now);
    w.used += Math.max(0, tokens);
    return { limit: tpm, remaining: Math.max(0, tpm - w.used), resetMs: w.start + TOKEN_WINDOW_MS - now };
  }

  /** The current state of every limited key, without counting anything. */
  snapshot(keys: readonly KeyState[]): { key: KeyState; requests: LimitView; tokens: LimitView | undefined }[] {
    const now = this.clock.now();
    const view = (w: Window | undefined, limit: number, length: number): LimitView =>
      !w || now - w.start >= length
        ? { limit, remaining: limit, resetMs: 0 }
        : { limit, remaining: Math.max(0, limit - w.used), resetMs: w.start + length - now };
    return keys
      .filter((k) => k.config.rateLimit)
      .map((key) => {
        const limit = key.config.rateLimit!;
        return {
          key,
          requests: view(this.requests.get(key), limit.requests, windowMsOf(limit)),
          tokens:
            limit.tokensPerMinute === undefined
              ? undefined
              : view(this.tokens.get(key), limit.tokensPerMinute, TOKEN_WINDOW_MS),
        };
      });
  }

  /** Forgets every window: each key starts with its full allowance. */
  reset(): void {
    this.requests.clear();
    this.tokens.clear();
  }
}
