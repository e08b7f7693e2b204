import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { requireCjs } from '../../lib/require.js';
import type * as IoRedis from 'ioredis';
import { ApiError, ERRORS } from '../../contract/errors.js';
import type { Clock } from '../clock.js';
import { windowMsOf } from '../config.js';
import { matches } from '../faults/match.js';
import {
  tooMany,
  RuleError,
  type FaultRules,
  type FaultRule,
  type RequestFacts,
  type RuleView,
} from '../faults/rules.js';
import { describeFault, type FaultSpec } from '../faults/spec.js';
import type { KeyState } from '../keys.js';
import type { Admission, LimitView } from '../rateLimits/limiter.js';
import * as lua from './lua.js';
import { RedisJournalStore } from './redisJournal.js';
import type { LimitSnapshot, StateHealth, StateStore, VideoTask, VideoTiming } from './store.js';

const TOKEN_WINDOW_MS = 60_000;
// ioredis (CommonJS) is loaded when Redis state is made: a server with its state in memory, as `npm start`
// runs it, never pays its import (about 50 ms of start-up).
let ioredis: typeof IoRedis | undefined;
const loadIoredis = (): typeof IoRedis => (ioredis ??= requireCjs('ioredis') as typeof IoRedis);

/** Every key the mock writes starts with this, so a Redis shared with other programs stays tidy. */
const KEY_PREFIX = 'uam:';
/** A video task is kept this long after it was made (in memory the LRU bounds them by count). */
const VIDEO_TTL_S = 24 * 60 * 60;
// Reconnect with backoff: 100 ms, doubling, at most 2 s between attempts, for as long as it takes.
const backoff = (attempt: number): number => Math.min(100 * 2 ** Math.min(attempt - 1, 5), 2000);

type Scripts = Record<keyof typeof SCRIPTS, (...args: (string | number)[]) => Promise<unknown>>;
const SCRIPTS = {
  uamAdmit: { lua: lua.ADMIT, keys: 2 },
  uamCharge: { lua: lua.CHARGE, keys: 1 },
  uamDraws: { lua: lua.DRAWS, keys: 0 },
  uamAddRule: { lua: lua.ADD_RULE, keys: 0 },
  uamSeedRules: { lua: lua.SEED_RULES, keys: 0 },
  uamListRules: { lua: lua.LIST_RULES, keys: 0 },
  uamDeleteRule: { lua: lua.DELETE_RULE, keys: 0 },
  uamClearRules: { lua: lua.CLEAR_RULES, keys: 0 },
  uamResetRules: { lua: lua.RESET_RULES, keys: 0 },
  uamClaim: { lua: lua.CLAIM, keys: 0 },
  uamAppendJournal: { lua: lua.APPEND_JOURNAL, keys: 0 },
  uamClearJournal: { lua: lua.CLEAR_JOURNAL, keys: 0 },
  uamPollVideo: { lua: lua.POLL_VIDEO, keys: 0 },
} as const;

interface CachedRule {
  readonly id: string;
  readonly rule: FaultRule;
}
interface RuleCache {
  readonly version: string;
  readonly rules: readonly CachedRule[];
}

/** Where the state lives, without a password: `redis://host:port`. */
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.length > 1 ? u.pathname : ''}`;
  } catch {
    return 'redis';
  }
}

/** What the Redis state needs from the rest of the services. */
interface RedisStateOptions {
  readonly url: string;
  readonly clock: Clock;
  /** The configured fault rules, already checked; also checks rules added later (schema, operations, labels). */
  readonly faultRules: FaultRules;
  /** A new, empty rule set with the server's checks, to check a rule before it goes to Redis. */
  readonly checker: () => FaultRules;
  readonly prefix?: string;
  readonly instance?: string;
  /** How long the health check waits for a PING's answer (`state.healthPingMs` of fixtures/limits.json). */
  readonly healthPingMs: number;
}

/**
 * The state in Redis, shared by every instance pointed at the same server. Each decision two instances
 * could race on is one Lua script; the journal's store (journalStore: a capped stream) shares its connection. While
 * Redis cannot be reached every call rejects at once (no offline queue) with a 503 `state_unavailable`, the client
 * reconnects with backoff, and journal records that cannot be written are counted in `unrecorded`.
 */
export class RedisState implements StateStore {
  readonly kind = 'redis';
  readonly instance: string;
  private readonly redis: IoRedis.Redis;
  private readonly scripts: Scripts;
  private readonly prefix: string;
  private readonly where: string;
  private journal: RedisJournalStore | undefined;
  private readonly keyIds = new WeakMap<KeyState, string>();
  private ruleCache: RuleCache | undefined;
  private lastError = 'not connected yet';
  private closed = false;

  constructor(private readonly options: RedisStateOptions) {
    this.prefix = options.prefix ?? KEY_PREFIX;
    this.where = describeUrl(options.url);
    this.instance = options.instance ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.redis = new (loadIoredis().Redis)(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      commandTimeout: 2000,
      retryStrategy: backoff,
      lazyConnect: false,
      // Commands issued in the same tick (many requests at once) go out in one write.
      enableAutoPipelining: true,
    });
    for (const [name, { lua: script, keys }] of Object.entries(SCRIPTS))
      this.redis.defineCommand(name, { lua: script, numberOfKeys: keys });
    this.scripts = this.redis as unknown as Scripts;
    this.redis.on('error', (err: Error) => {
      this.lastError = err.message || String(err);
    });
    this.redis.on('close', () => {
      if (!this.closed) this.lastError = this.lastError === 'not connected yet' ? 'connection closed' : this.lastError;
    });
    this.redis.on('ready', () => {
      this.ruleCache = undefined; // Redis may have restarted empty or been changed while away
      this.seedRules().catch((err: unknown) => {
        this.lastError = `could not write the configured fault rules: ${(err as Error).message}`;
      });
    });
  }

  /** Resolves once Redis answers (or after `timeoutMs`, false). */
  ready(timeoutMs = 5000): Promise<boolean> {
    if (this.redis.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.redis.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.redis.on('ready', onReady);
    });
  }

  private unavailable(): ApiError {
    return new ApiError(ERRORS.STATE_UNAVAILABLE, {
      message: `The mock's shared state (${this.where}) cannot be reached: ${this.lastError}. Retry shortly.`,
      headers: { 'retry-after': '1' },
    });
  }

  /** Runs Redis work; a lost or refused connection becomes the 503, a script error stays an error. */
  private async use<T>(work: () => Promise<T>): Promise<T> {
    if (this.redis.status !== 'ready') throw this.unavailable();
    try {
      return await work();
    } catch (err) {
      if (err instanceof ApiError || err instanceof RuleError || err instanceof loadIoredis().ReplyError) throw err;
      this.lastError = (err as Error)?.message ?? String(err);
      throw this.unavailable();
    }
  }

  private key(name: string): string {
    return this.prefix + name;
  }

  // Rate limits: one hash per key and window kind, named by a hash of the key (never the key itself).
  private keyId(key: KeyState): string {
    let id = this.keyIds.get(key);
    if (!id) this.keyIds.set(key, (id = createHash('sha256').update(key.config.key).digest('hex').slice(0, 16)));
    return id;
  }

  admit(key: KeyState, countsTokens: boolean): Promise<Admission | undefined> | undefined {
    const limit = key.config.rateLimit;
    if (!limit) return undefined;
    return this.use(async () => {
      const now = this.options.clock.now();
      const windowMs = windowMsOf(limit);
      const tpm = countsTokens ? limit.tokensPerMinute : undefined;
      const id = this.keyId(key);
      const [rs, ru, ts, tu, refused] = (await this.scripts.uamAdmit(
        this.key(`rl:r:${id}`),
        this.key(`rl:t:${id}`),
        this.prefix,
        now,
        limit.requests,
        windowMs,
        tpm ?? -1,
        TOKEN_WINDOW_MS,
      )) as [string, number, string, string | number, number];
      const used = Number(ru);
      const tokensUsed = Number(tu);
      return {
        requests: {
          limit: limit.requests,
          remaining: Math.max(0, limit.requests - used),
          resetMs: Number(rs) + windowMs - now,
        },
        tokens:
          tpm === undefined
            ? undefined
            : { limit: tpm, remaining: Math.max(0, tpm - tokensUsed), resetMs: Number(ts) + TOKEN_WINDOW_MS - now },
        refused: refused === 1 ? 'requests' : refused === 2 ? 'tokens' : undefined,
        tokensUsed: tpm === undefined ? 0 : tokensUsed,
      };
    });
  }

  charge(key: KeyState, tokens: number): Promise<LimitView | undefined> | undefined {
    const tpm = key.config.rateLimit?.tokensPerMinute;
    if (tpm === undefined) return undefined;
    return this.use(async () => {
      const now = this.options.clock.now();
      const [start, used] = (await this.scripts.uamCharge(
        this.key(`rl:t:${this.keyId(key)}`),
        this.prefix,
        now,
        Math.max(0, tokens),
        TOKEN_WINDOW_MS,
      )) as [string, number];
      return { limit: tpm, remaining: Math.max(0, tpm - Number(used)), resetMs: Number(start) + TOKEN_WINDOW_MS - now };
    });
  }

  limitSnapshot(keys: readonly KeyState[]): Promise<LimitSnapshot[]> {
    const limited = keys.filter((k) => k.config.rateLimit);
    return this.use(async () => {
      const pipe = this.redis.pipeline();
      for (const key of limited)
        pipe.hmget(this.key(`rl:r:${this.keyId(key)}`), 's', 'u').hmget(this.key(`rl:t:${this.keyId(key)}`), 's', 'u');
      const replies = (await pipe.exec()) ?? [];
      const now = this.options.clock.now();
      const view = (reply: [Error | null, unknown] | undefined, limit: number, length: number): LimitView => {
        const [s, u] = (reply?.[1] ?? []) as (string | null)[];
        if (reply?.[0]) throw reply[0];
        if (s == null || now - Number(s) >= length) return { limit, remaining: limit, resetMs: 0 };
        return { limit, remaining: Math.max(0, limit - Number(u ?? 0)), resetMs: Number(s) + length - now };
      };
      return limited.map((key, i) => {
        const limit = key.config.rateLimit!;
        return {
          key,
          requests: view(replies[2 * i], limit.requests, windowMsOf(limit)),
          tokens:
            limit.tokensPerMinute === undefined
              ? undefined
              : view(replies[2 * i + 1], limit.tokensPerMinute, TOKEN_WINDOW_MS),
        };
      });
    });
  }

  /** Forgets the windows of the configured keys (their names are known: no SCAN over the keyspace). */
  resetLimits(keys: readonly KeyState[]): Promise<void> {
    return this.use(async () => {
      const names = keys.flatMap((k) => [this.key(`rl:r:${this.keyId(k)}`), this.key(`rl:t:${this.keyId(k)}`)]);
      if (names.length) await this.redis.del(...names);
    });
  }

  // Fault rules: checked here as in memory, stored and counted in Redis.
  private ruleArgs(rule: FaultRule & { id?: string }): string[] {
    const { state: _state, ...plain } = rule as FaultRule & { state?: unknown };
    return [
      rule.id ?? '',
      JSON.stringify(plain),
      rule.times === undefined ? '' : String(rule.times),
      rule.probability === undefined ? '' : String(rule.probability),
      String((rule.seed ?? 1) >>> 0),
    ];
  }

  private async seedRules(): Promise<void> {
    const configured = this.options.faultRules.list();
    await this.scripts.uamSeedRules(
      this.prefix,
      this.options.faultRules.maxRules,
      ...configured.flatMap((r) => this.ruleArgs(r)),
    );
  }

  /** Checks a rule with the local checker (schema, operations, key labels) without keeping it there. */
  private check(input: unknown): FaultRule {
    const { state: _state, id, ...rest } = this.options.checker().add(input);
    const given = (input as { id?: unknown }).id;
    return given === undefined ? rest : { id, ...rest };
  }

  addRule(input: unknown): Promise<RuleView> {
    let rule: FaultRule;
    try {
      rule = this.check(input);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.use(async () => {
      const id = (await this.scripts.uamAddRule(
        this.prefix,
        this.options.faultRules.maxRules,
        ...this.ruleArgs(rule),
      )) as string;
      if (id === 'dup') throw new RuleError(`A fault rule with id '${rule.id}' already exists.`, 'id', 409);
      if (id === 'full') throw tooMany(this.options.faultRules.maxRules);
      this.ruleCache = undefined;
      return { id, ...rule, state: { matched: 0, fired: 0, remaining: rule.times ?? null } } as RuleView;
    });
  }

  private async loadRules(): Promise<{ cache: RuleCache; views: RuleView[] }> {
    const flat = (await this.scripts.uamListRules(this.prefix)) as string[];
    const rules: CachedRule[] = [];
    const views: RuleView[] = [];
    for (let i = 1; i + 3 < flat.length + 1; i += 4) {
      const id = flat[i]!;
      const rule = JSON.parse(flat[i + 1]!) as FaultRule;
      const matched = Number(flat[i + 2]);
      const fired = Number(flat[i + 3]);
      rules.push({ id, rule });
      views.push({
        id,
        ...rule,
        state: { matched, fired, remaining: rule.times === undefined ? null : rule.times - fired },
      });
    }
    const cache = { version: flat[0] ?? '0', rules };
    this.ruleCache = cache;
    return { cache, views };
  }

  rules(): Promise<RuleView[]> {
    return this.use(async () => (await this.loadRules()).views);
  }

  deleteRule(id: string): Promise<boolean> {
    return this.use(async () => {
      this.ruleCache = undefined;
      return (await this.scripts.uamDeleteRule(this.prefix, id)) === 1;
    });
  }

  clearRules(): Promise<number> {
    return this.use(async () => {
      this.ruleCache = undefined;
      return Number(await this.scripts.uamClearRules(this.prefix));
    });
  }

  resetRules(): Promise<void> {
    return this.use(async () => void (await this.scripts.uamResetRules(this.prefix)));
  }

  /**
   * The rules are matched here against a cached copy; one script then checks the copy is current,
   * and counts, draws and claims the first matching rule with times left, atomically.
   */
  claimFault(req: RequestFacts): Promise<{ fault: FaultSpec; label: string } | undefined> {
    return this.use(async () => {
      for (let attempt = 0; attempt < 5; attempt++) {
        const cache = this.ruleCache ?? (await this.loadRules()).cache;
        const candidates = cache.rules.filter((r) => matches(r.rule.match, req));
        const reply = (await this.scripts.uamClaim(
          this.prefix,
          cache.version,
          ...candidates.map((r) => r.id),
        )) as string[];
        if (reply[0] === 'stale') {
          this.ruleCache = undefined;
          continue;
        }
        if (reply[0] !== 'fired') return undefined;
        const rule = candidates.find((r) => r.id === reply[1])!.rule;
        return { fault: rule.fault, label: `${describeFault(rule.fault)} [rule ${reply[1]}]` };
      }
      throw new Error('the fault rules kept changing while a request was matched against them');
    });
  }

  /** Test aid: `count` draws of the Lua generator from `seed`, to compare with src/lib/prng.ts. */
  draws(seed: number, count: number): Promise<number[]> {
    return this.use(async () =>
      ((await this.scripts.uamDraws(this.prefix, count, seed >>> 0)) as string[]).map(Number),
    );
  }

  /** The journal's store: a stream capped near `capacity` on this connection; each entry says which instance answered.
   * One per state (the process's one journal). */
  journalStore(capacity: number): RedisJournalStore {
    if (this.journal) return this.journal;
    const journalKey = this.key('journal');
    return (this.journal = new RedisJournalStore(capacity, {
      instance: this.instance,
      ready: () => this.redis.status === 'ready',
      use: (work) => this.use(work),
      append: (cap, json) => this.scripts.uamAppendJournal(this.prefix, cap, json),
      newest: async (count) => {
        const [[e1, rows], [e2, total]] = (await this.redis
          .multi()
          .xrevrange(journalKey, '+', '-', 'COUNT', count)
          .get(this.key('journal:total'))
          .exec())! as [[Error | null, [string, string[]][]], [Error | null, string | null]];
        if (e1 || e2) throw e1 ?? e2;
        return { rows: rows.map(([, fields]) => fields[1]!), total: Number(total ?? 0) };
      },
      clear: async (cap) => Number(await this.scripts.uamClearJournal(this.prefix, cap)),
    }));
  }

  // Video tasks: a hash per task, kept VIDEO_TTL_S; a poll counts itself atomically.
  putVideo(id: string, task: VideoTask): Promise<void> {
    return this.use(async () => {
      const k = this.key(`video:${id}`);
      await this.redis
        .multi()
        .del(k)
        .hset(
          k,
          'body',
          JSON.stringify(task.body),
          'polls',
          task.polls,
          ...(task.timing ? ['timing', JSON.stringify(task.timing)] : []),
        )
        .expire(k, VIDEO_TTL_S)
        .exec();
    });
  }

  pollVideo(id: string): Promise<VideoTask | undefined> {
    return this.use(async () => {
      const reply = (await this.scripts.uamPollVideo(this.prefix, id)) as [string, number, string | null] | null;
      if (!reply) return undefined;
      const task: VideoTask = { body: JSON.parse(reply[0]) as Record<string, unknown>, polls: Number(reply[1]) };
      if (reply[2]) task.timing = JSON.parse(reply[2]) as VideoTiming;
      return task;
    });
  }

  /**
   * Whether Redis answers now. A connection that is not ready says so at once; a ready one is asked a PING,
   * since a Redis that is stopped (SIGSTOP) or hung keeps its connection open and only its silence tells.
   * The probe waits at most `healthPingMs`, so it answers within a probe's own timeout either way.
   */
  async health(): Promise<StateHealth> {
    const view = (reason?: string): StateHealth => ({
      kind: 'redis',
      ok: reason === undefined,
      ...(reason === undefined ? {} : { reason }),
      instance: this.instance,
      unrecorded: this.journal?.unrecorded ?? 0,
    });
    if (this.redis.status !== 'ready') return view(`Redis at ${this.where} is ${this.redis.status}: ${this.lastError}`);
    const limit = this.options.healthPingMs;
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<'silent'>((resolve) => {
      timer = setTimeout(resolve, limit, 'silent');
    });
    try {
      const answer = await Promise.race([this.redis.ping(), silent]);
      if (answer === 'silent')
        return view(
          `Redis at ${this.where} did not answer a PING within ${limit} ms: it is stopped, hung or overloaded`,
        );
      return view();
    } catch (err) {
      return view(`Redis at ${this.where} did not answer a PING: ${(err as Error)?.message ?? String(err)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => undefined);
    this.redis.disconnect();
  }
}
