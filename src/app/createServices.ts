import { BodyBudget } from '../domain/bodyBudget.js';
import { Catalogue } from '../domain/catalogue.js';
import { systemClock } from '../domain/clock.js';
import { ConfigError, type Config } from '../domain/config.js';
import { FaultRules, RuleError } from '../domain/faults/rules.js';
import { Journal } from '../domain/journal/journal.js';
import { StreamStats } from '../domain/lateness.js';
import { Latency } from '../domain/latency/control.js';
import { Slots } from '../domain/latency/slots.js';
import { ResponseBodies } from '../domain/responseBodies.js';
import { keyStates } from '../domain/keys.js';
import { packageLimits, type Limits } from '../domain/limits.js';
import { MediaStore } from '../domain/mediaStore.js';
import { Metrics } from '../domain/metrics/metrics.js';
import { packageMetrics } from '../domain/metrics/table.js';
import { MemoryState } from '../domain/state/memory.js';
import { RedisState } from '../domain/state/redis.js';
import type { StateStore } from '../domain/state/store.js';
import { RateLimiter } from '../domain/rateLimits/limiter.js';
import { loadReplyRules } from '../domain/replyRules.js';
import { configSecrets, echoMask } from '../domain/secrets.js';
import type { Services, VideoTask } from '../domain/services.js';
import type { Clock } from '../domain/clock.js';
import { faultable, operations } from '../contract/operations.js';
import type { SchemaRegistry } from '../contract/schemas.js';
import { Lru } from '../lib/lru.js';
import { Completions } from '../text/complete.js';

/** The fault rules of the configuration; a rule that cannot be accepted is a start-up error naming the rule. */
function faultRulesOf(config: Config, schemas: SchemaRegistry, limits: Limits): FaultRules {
  const faultRules = new FaultRules(schemas, {
    operations: operations.filter(faultable).map((op) => op.id),
    keyNames: config.keys.flatMap((k) => (k.name ? [k.name] : [])),
    limits: { maxDelayMs: config.timeouts.stallMaxMs },
    maxRules: limits.faults.maxRules,
  });
  config.faultRules.forEach((rule, i) => {
    try {
      faultRules.add(rule);
    } catch (err) {
      if (!(err instanceof RuleError)) throw err;
      throw new ConfigError(
        `invalid configuration:\n  faultRules[${i}]${err.param ? `.${err.param}` : ''}: ${err.message}`,
      );
    }
  });
  return faultRules;
}

/** The state the pipeline and the admin API use: this instance's own objects, or Redis shared by many. */
function stateOf(
  config: Config,
  schemas: SchemaRegistry,
  parts: Pick<Services, 'rateLimits' | 'faultRules' | 'videoTasks'>,
  clock: Clock,
  limits: Limits,
): StateStore {
  if (config.state === 'memory') return new MemoryState(parts.rateLimits, parts.faultRules, parts.videoTasks);
  return new RedisState({
    url: config.state,
    clock,
    faultRules: parts.faultRules,
    checker: () => faultRulesOf({ ...config, faultRules: [] }, schemas, limits),
    healthPingMs: limits.state.healthPingMs,
  });
}

/** Builds the services of one server from its checked configuration: catalogue, keys, limits, state. */
export function createServices(config: Config, schemas: SchemaRegistry): Services {
  // Checked here, at start-up, like the catalogue: a broken fixtures/limits.json stops the server before it
  // listens. Every bound the server applies comes from these, passed on to whoever needs it.
  const limits = packageLimits(schemas);
  const clock = systemClock();
  const catalogue = new Catalogue(schemas);
  const parts = {
    rateLimits: new RateLimiter(clock),
    faultRules: faultRulesOf(config, schemas, limits),
    videoTasks: new Lru<VideoTask>(limits.video.tasksKept),
  };
  const state = stateOf(config, schemas, parts, clock, limits);
  // One journal per process: its store is the shared state's when that holds one (Redis), else a ring in memory.
  const journal = new Journal(
    config.journalSize,
    limits.records,
    configSecrets(config),
    state.journalStore?.(config.journalSize),
  );
  const streams = new StreamStats();
  // Each model's cap is the profile it has without a request's choice (read from the services' latency control, which
  // tests may replace): a header changes a request's timing only.
  const load = new Slots((model) => services.latency.choose(model)?.profile);
  const services: Services = {
    ...parts,
    journal,
    streams,
    latency: new Latency(config.latency, catalogue, {
      maxQuotedChars: limits.messages.maxQuotedChars,
      maxProfiles: limits.latencyProfiles.maxCount,
    }),
    load,
    metrics:
      config.metrics === 'off'
        ? undefined
        : new Metrics(config.metrics, packageMetrics(schemas), {
            load,
            streams,
            models: new Set(catalogue.models.map((m) => m.id)),
          }),
    state,
    responseBodies: new ResponseBodies(limits.records, config.journalSize, configSecrets(config)),
    config,
    schemas,
    catalogue,
    limits,
    now:
      config.clock === 'system'
        ? () => Math.floor(Date.now() / 1000)
        : (
            (t: number) => () =>
              t
          )(config.clock),
    media: new MediaStore(config.mediaCache, limits.video.fps),
    // Recent completions: 128 of them, at most 16 MiB, in each of its tables (a cache, not a limit users see).
    completions: new Completions(128, 16 * 1024 * 1024),
    keys: keyStates(config.keys),
    bodyBudget: new BodyBudget(config.bodyMemory, limits.requests.largeBodyBytes),
    clock,
    replyRules: loadReplyRules(schemas, config.replyRules),
    secrets: echoMask(configSecrets(config)),
  };
  return services;
}
