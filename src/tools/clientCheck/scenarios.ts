import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemaId, type SchemaRegistry } from '../../contract/schemas.js';
import { toDetails } from '../../contract/validation.js';
import type { FaultRule } from '../../domain/faults/rules.js';
import { ROOT } from '../../lib/paths.js';

/** Folder of the scenario files, beside conformance/ in the package. */
const SCENARIOS_DIR = join(ROOT, 'client-check');
const SCHEMA = schemaId('client-check-scenario.json');

/** What decides whether a scenario applies to a client: see `needs` in schemas/client-check-scenario.json. */
type Need = 'stream' | 'client-timeout' | 'concurrency';

/** The checks of a scenario, each optional; schemas/client-check-scenario.json describes each. */
interface Expectations {
  readonly attempts?: { readonly min?: number; readonly max?: number };
  readonly retryAfter?: { readonly toleranceMs: number };
  readonly backoff?: { readonly minFirstGapMs: number; readonly growth: number };
  readonly sameBody?: true;
  readonly timeout?: { readonly toleranceMs: number };
  readonly rate?: { readonly windowMs: number };
  readonly exit?: 'success' | 'failure';
}

/** One scenario: the bad day the mock plays, and what a well-behaved client does about it. */
export interface Scenario {
  readonly id: string;
  readonly title: string;
  readonly why: string;
  readonly good: string;
  readonly tags?: readonly string[];
  readonly operation?: string;
  readonly concurrency?: number;
  readonly needs?: readonly Need[];
  readonly deadlineMs?: number;
  readonly mock: {
    readonly faultRules?: readonly FaultRule[];
    readonly rateLimit?: { readonly requests: number; readonly windowMs?: number };
    readonly apiKey?: 'valid' | 'unknown';
    readonly hold?: { readonly what: 'first-token' | 'answer'; readonly pastClientTimeoutMs: number };
  };
  readonly expect: Expectations;
}

/** A scenario file that does not hold a valid scenario: the message names the file and the field. */
export class ScenarioError extends Error {
  override name = 'ScenarioError';
}

/** A scenario checked against the schema; `where` names it in the error. */
export function checkScenario(registry: SchemaRegistry, value: unknown, where: string): Scenario {
  const errors = registry.check(SCHEMA, value);
  if (errors.length) {
    const lines = toDetails(errors).map((d) => `${d.param ?? '(root)'}: ${d.message}`);
    throw new ScenarioError(`${where}: not a valid client-check scenario:\n  ${lines.join('\n  ')}`);
  }
  const scenario = value as Scenario;
  const { min, max } = scenario.expect.attempts ?? {};
  if (min !== undefined && max !== undefined && min > max)
    throw new ScenarioError(`${where}: expect.attempts.min (${min}) is above max (${max})`);
  return scenario;
}

/** Every scenario of the folder, in the order of their names; each file's name is its id. */
export function loadScenarios(registry: SchemaRegistry, dir: string = SCENARIOS_DIR): Scenario[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  return files.map((file) => {
    let value: unknown;
    try {
      value = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    } catch (err) {
      throw new ScenarioError(`${file}: ${(err as Error).message}`);
    }
    const scenario = checkScenario(registry, value, file);
    if (`${scenario.id}.json` !== file)
      throw new ScenarioError(`${file}: the id is '${scenario.id}'; a scenario file is named after its id`);
    return scenario;
  });
}

/**
 * The scenarios a run asks for, in the suite's order: each name is a scenario id or a tag. An empty
 * list means all. Throws a ScenarioError naming what matches nothing.
 */
export function selectScenarios(all: readonly Scenario[], names: readonly string[]): Scenario[] {
  if (!names.length) return [...all];
  const unknown = names.filter((n) => !all.some((s) => s.id === n || s.tags?.includes(n)));
  if (unknown.length) {
    const tags = [...new Set(all.flatMap((s) => s.tags ?? []))].sort();
    throw new ScenarioError(
      `no scenario or tag named ${unknown.map((n) => `'${n}'`).join(', ')}; scenarios: ${all.map((s) => s.id).join(', ')}; tags: ${tags.join(', ')}`,
    );
  }
  return all.filter((s) => names.some((n) => s.id === n || s.tags?.includes(n)));
}

/** The scenario with this id from the package's folder; a ScenarioError names the ones there are. */
export function scenarioById(registry: SchemaRegistry, id: string): Scenario {
  const all = loadScenarios(registry);
  const found = all.find((s) => s.id === id);
  if (!found)
    throw new ScenarioError(`no client-check scenario '${id}'; there are: ${all.map((s) => s.id).join(', ')}`);
  return found;
}
