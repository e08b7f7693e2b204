import type { FaultSpec } from '../faults/spec.js';
import type { RequestFacts, RuleView } from '../faults/rules.js';
import type { JournalStore } from '../journal/store.js';
import type { KeyState } from '../keys.js';
import type { Admission, LimitView } from '../rateLimits/limiter.js';

/** A value now (in memory) or later (from a shared store): callers await only when they get a Promise. */
export type Awaitable<T> = T | Promise<T>;

/** A video generation task as stored for the poll route. */
export interface VideoTask {
  body: Record<string, unknown>;
  polls: number;
  /** Under a latency profile: when the task was made (wall clock, ms) and its drawn generation time; its status
   * follows them, so every instance sharing the task answers the same. */
  timing?: VideoTiming;
}

/** A video task's generation by wall time: queued for the first tenth of `durationMs` from `startMs`, generating
 * until the end, then completed. */
export interface VideoTiming {
  readonly startMs: number;
  readonly durationMs: number;
}

/** One limited key's state, as GET /__admin/rate-limits shows it. */
export interface LimitSnapshot {
  readonly key: KeyState;
  readonly requests: LimitView;
  readonly tokens: LimitView | undefined;
}

/** Whether the state can be used; `reason` says why not. */
export interface StateHealth {
  readonly kind: 'memory' | 'redis';
  readonly ok: boolean;
  readonly reason?: string;
  /** The id this instance writes on its journal entries (shared state only). */
  readonly instance?: string;
  readonly unrecorded?: number;
}

/**
 * The state that instances of the mock may share: rate-limit windows, fault rules with their counters
 * and seeded draws, the request journal's store and video tasks. In memory (the default) every method answers
 * at once; in Redis each answers with a Promise that rejects with a 503 `state_unavailable` ApiError
 * when Redis cannot be reached. Everything else (media cache, completions, body budget) stays per instance.
 */
export interface StateStore {
  readonly kind: 'memory' | 'redis';
  /** Decides on one request of a key and counts it when allowed (undefined for a key without limits). */
  admit(key: KeyState, countsTokens: boolean): Awaitable<Admission | undefined>;
  /** Adds the tokens a finished chat request used; the token limit's state after it. */
  charge(key: KeyState, tokens: number): Awaitable<LimitView | undefined>;
  limitSnapshot(keys: readonly KeyState[]): Awaitable<LimitSnapshot[]>;
  /** Every key gets its full allowance back. */
  resetLimits(keys: readonly KeyState[]): Awaitable<void>;

  /** Checks a rule and adds it after the others (throws RuleError for a bad rule or a taken id). */
  addRule(input: unknown): Awaitable<RuleView>;
  rules(): Awaitable<RuleView[]>;
  deleteRule(id: string): Awaitable<boolean>;
  clearRules(): Awaitable<number>;
  resetRules(): Awaitable<void>;
  /** The fault for a request: the first rule that matches, has times left and wins its draw; counted atomically. */
  claimFault(req: RequestFacts): Awaitable<{ fault: FaultSpec; label: string } | undefined>;

  /** The store of the process's one journal, when the state holds it (Redis); absent in memory, where the journal keeps
   * its own ring. */
  journalStore?(capacity: number): JournalStore;

  putVideo(id: string, task: VideoTask): Awaitable<void>;
  /** The task after counting this poll; undefined when there is none. */
  pollVideo(id: string): Awaitable<VideoTask | undefined>;

  health(): Awaitable<StateHealth>;
  /** Resolves true once shared state answers, false after `timeoutMs` (absent in memory: always ready). */
  ready?(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}
