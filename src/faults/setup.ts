import { ConfigError, type Config } from '../config.js';
import { Journal } from '../journal.js';
import { configSecrets } from '../secrets.js';
import { faultable, operations } from '../operations.js';
import type { SchemaRegistry } from '../schemas.js';
import { systemClock, type Clock } from './clock.js';
import { RateLimiter } from './rateLimiter.js';
import { FaultRules, RuleError } from './rules.js';

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
