import type { Catalogue } from '../domain/catalogue.js';
import type { Config, KeyConfig } from '../domain/config.js';
import type { Lru } from '../lib/lru.js';
import type { SchemaRegistry } from './schemas.js';
import type { Limits } from '../domain/limits.js';
import type { Clock } from '../domain/clock.js';
import type { RateLimiter } from '../domain/rateLimits/limiter.js';
import type { FaultRules } from '../domain/faults/rules.js';
import type { Journal } from '../domain/journal.js';
import type { BodyBudget } from '../domain/bodyBudget.js';

/** One SSE event of a streamed reply: its JSON text and how many tokens it carries (for pacing). */
export interface SseEvent {
  readonly data: string;
  readonly tokens: number;
}

/** What a handler answers; the respond middleware writes it, the faults middleware may alter it first. */
export type Reply =
  | {
      kind: 'json';
      status?: number;
      /** A value to serialise, or JSON text written as it is. */
      body: unknown;
      headers?: Record<string, string>;
      /** Tokens the answer used (chat), for the tokens-per-minute limit. */
      tokens?: number;
    }
  | { kind: 'binary'; contentType: string; body: Buffer; headers?: Record<string, string> }
  | {
      kind: 'sse';
      events: SseEvent[];
      /**
       * How the stream ends: `done` writes `data: [DONE]`; `cut` drops the connection after `stopAfter`
       * events (the stream-cut fault); `stall` sends `stopAfter` events, then nothing until the client
       * gives up or the server's stall maximum passes.
       */
      ending: 'done' | 'cut' | 'stall';
      stopAfter?: number;
      /** Replace the JSON of this event with a broken one (the malformed fault). */
      malformedAt?: number;
      pacing: { timeToFirstTokenMs: number; tokensPerSecond: number };
      headers?: Record<string, string>;
    };

/** A configured key with its usage counters; the key itself never leaves this object. */
export interface KeyState {
  readonly config: KeyConfig;
  /** The key masked for display, e.g. sk-m...ault. */
  readonly masked: string;
  readonly usage: { requests: number; byOperation: Record<string, number> };
}

/** Shared services built once by createApp and handed to every handler. */
export interface Services {
  readonly config: Config;
  readonly schemas: SchemaRegistry;
  readonly catalogue: Catalogue;
  readonly limits: Limits;
  /** Unix seconds for `created` fields: fixed by default so bodies are byte-identical. */
  readonly now: () => number;
  readonly media: Lru<Buffer>;
  readonly videoTasks: Lru<VideoTask>;
  readonly keys: readonly KeyState[];
  /** Room for large request bodies: parseBody reserves it before reading one, the request gives it back when over. */
  readonly bodyBudget: BodyBudget;
  /** Time for rate-limit windows and delay faults; tests replace its methods instead of sleeping. */
  readonly clock: Clock;
  readonly rateLimits: RateLimiter;
  readonly faultRules: FaultRules;
  readonly journal: Journal;
  /** Extension point for later features (reply rules, fault state, journal): set by createApp. */
  readonly extras: Record<string, unknown>;
}

/** A video generation task as stored for the poll route. */
export interface VideoTask {
  body: Record<string, unknown>;
  polls: number;
}

/** What a handler receives: the validated body, path parameters and the calling key. */
export interface HandlerRequest {
  readonly body: Record<string, unknown>;
  readonly params: Record<string, string>;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The raw request body, for ids derived from the exact request. */
  readonly raw: string;
  readonly key: KeyState | undefined;
  /** Base URL for links in responses, e.g. http://127.0.0.1:4010. */
  readonly baseUrl: string;
  readonly services: Services;
}

/** An operation's handler: request in, reply out. */
export type Handler = (req: HandlerRequest) => Reply | Promise<Reply>;
