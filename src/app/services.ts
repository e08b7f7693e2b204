import { ConfigError, type Config } from '../domain/config.js';
import { Journal } from '../domain/journal.js';
import { configSecrets } from '../domain/secrets.js';
import { faultable, operations } from '../contract/operations.js';
import type { SchemaRegistry } from '../contract/schemas.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { RateLimiter } from '../domain/rateLimits/limiter.js';
import { FaultRules, RuleError } from '../domain/faults/rules.js';

/** The fault, limit and journal state of one server, built from its configuration. */
export interface FaultState {
  readonly clock: Clock;
  readonly rateLimits: RateLimiter;
  readonly faultRules: FaultRules;
  readonly journal: Journal;
}

/** Builds the state; a config rule that cannot be accepted is a start-up error naming the rule. */
export function createFaultState(config: Config, schemas: SchemaRegistry): FaultState {
  const clock = systemClock();
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
  return { clock, rateLimits: new RateLimiter(clock), faultRules, journal: new Journal(config.journalSize, configSecrets(config)) };
}
