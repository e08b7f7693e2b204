import type { BodyBudget } from './bodyBudget.js';
import type { Catalogue } from './catalogue.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { FaultRules } from './faults/rules.js';
import type { Journal, JournalStore } from './journal/journal.js';
import type { StreamStats } from './lateness.js';
import type { LatencyControl } from './latency/types.js';
import type { Slots } from './latency/slots.js';
import type { EchoMask } from './secrets.js';
import type { KeyState } from './keys.js';
import type { Limits } from './limits.js';
import type { MediaStore } from './mediaStore.js';
import type { RateLimiter } from './rateLimits/limiter.js';
import type { ResponseBodies } from './responseBodies.js';
import type { Metrics } from './metrics/metrics.js';
import type { Lru } from '../lib/lru.js';
import type { SchemaRegistry } from '../contract/schemas.js';
import type { StateStore, VideoTask } from './state/store.js';
import type { Completions } from '../text/complete.js';
import type { CompiledRule } from '../text/replies.js';

/** Shared services built once by createApp and handed to every handler. */
export interface Services {
  readonly config: Config;
  readonly schemas: SchemaRegistry;
  readonly catalogue: Catalogue;
  readonly limits: Limits;
  /** Unix seconds for `created` fields: fixed by default so bodies are byte-identical. */
  readonly now: () => number;
  /** Every media body (PNG, MP4, MP3, WAV), made once and kept in a bounded cache. */
  readonly media: MediaStore;
  readonly videoTasks: Lru<VideoTask>;
  readonly keys: readonly KeyState[];
  /** Room for large request bodies: parseBody reserves it before reading one, the request gives it back when over. */
  readonly bodyBudget: BodyBudget;
  /** Time for rate-limit windows and delay faults; tests replace its methods instead of sleeping. */
  readonly clock: Clock;
  readonly rateLimits: RateLimiter;
  readonly faultRules: FaultRules;
  /** The process's one journal: a ring in memory, or in Redis with `state: redis://...` (the state's journal store). */
  readonly journal: Journal<JournalStore>;
  /** Recent response bodies the journal does not keep whole (binary, long text), for the inspector; bounded by size. */
  readonly responseBodies: ResponseBodies;
  /**
   * The state instances may share (rate limits, fault rules, video tasks, the journal's store): in memory it answers
   * through rateLimits, faultRules and videoTasks above; with `state: redis://...` from Redis.
   * The pipeline, the handlers and the admin API go through it.
   */
  readonly state: StateStore;
  /** Recent chat completions (a reply cut to max_tokens and stop), made once for repeated requests. */
  readonly completions: Completions;
  /** The reply rules chat answers from: rules added at run time, the user's file (if any), then the built-in ones. */
  readonly replyRules: CompiledRule[];
  /** Masks every configured secret in what goes back to clients (error envelopes, echoed headers, quoted prompts). */
  readonly secrets: EchoMask;
  /** How many streams are open, and how late their paced events were written (GET /__admin/streams). */
  readonly streams: StreamStats;
  /** The latency profiles in force (configuration, admin API; the pacing header picks one per request). */
  readonly latency: LatencyControl;
  /** Each model's slots on this instance: the requests that run and wait (a profile's maxRunning and maxWaiting). */
  readonly load: Slots;
  /** GET /metrics's figures (domain/metrics/); undefined with `metrics: off`. */
  readonly metrics: Metrics | undefined;
  /** With logging on: how many log lines were dropped because the output did not keep up (shown in /__health). */
  logDropped?: () => unknown;
}

export type { VideoTask } from './state/store.js';
