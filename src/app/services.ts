import { BodyBudget } from '../domain/bodyBudget.js';
import { Catalogue } from '../domain/catalogue.js';
import { systemClock } from '../domain/clock.js';
import { ConfigError, type Config } from '../domain/config.js';
import { FaultRules, RuleError } from '../domain/faults/rules.js';
import { Journal } from '../domain/journal.js';
import { keyStates } from '../domain/keys.js';
import { loadLimits } from '../domain/limits.js';
import { MediaStore } from '../domain/mediaStore.js';
import { RateLimiter } from '../domain/rateLimits/limiter.js';
import { loadReplyRules } from '../domain/replyRules.js';
import { configSecrets } from '../domain/secrets.js';
import type { Services, VideoTask } from '../domain/services.js';
import { faultable, operations } from '../contract/operations.js';
import type { SchemaRegistry } from '../contract/schemas.js';
import { Lru } from '../lib/lru.js';
import type { Completion } from '../text/complete.js';

/** The fault rules of the configuration; a rule that cannot be accepted is a start-up error naming the rule. */
function faultRulesOf(config: Config, schemas: SchemaRegistry): FaultRules {
  const faultRules = new FaultRules(schemas, {
    operations: operations.filter(faultable).map((op) => op.id),
    keyLabels: config.keys.flatMap((k) => (k.label ? [k.label] : [])),
    limits: { maxDelayMs: config.timeouts.stallMaxMs },
  });
  config.faultRules.forEach((rule, i) => {
    try {
      faultRules.add(rule);
    } catch (err) {
      if (!(err instanceof RuleError)) throw err;
      throw new ConfigError(`invalid configuration:\n  faultRules[${i}]${err.param ? `.${err.param}` : ''}: ${err.message}`);
    }
  });
  return faultRules;
}

/** Builds the services of one server from its checked configuration: catalogue, keys, limits, state. */
export function createServices(config: Config, schemas: SchemaRegistry): Services {
  const limits = loadLimits();
  const clock = systemClock();
  return {
    config,
    schemas,
    catalogue: new Catalogue(schemas),
    limits,
    now:
      config.clock === 'system'
        ? () => Math.floor(Date.now() / 1000)
        : (
            (t: number) => () =>
              t
          )(config.clock),
    media: new MediaStore(config.mediaCache, limits.video.fps),
    videoTasks: new Lru<VideoTask>(limits.video.tasksKept),
    // Recent completions: 128 of them, at most 16 MiB of text (a cache, not a limit users see).
    completions: new Lru<Completion>(128, 16 * 1024 * 1024),
    keys: keyStates(config.keys),
    bodyBudget: new BodyBudget(config.bodyMemory, limits.requests.largeBodyBytes),
    clock,
    rateLimits: new RateLimiter(clock),
    faultRules: faultRulesOf(config, schemas),
    journal: new Journal(config.journalSize, configSecrets(config)),
    replyRules: loadReplyRules(schemas, config.replyRules),
  };
}
