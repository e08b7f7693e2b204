import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Catalogue } from '../../src/domain/catalogue.js';
import { SchemaRegistry } from '../../src/contract/schemas.js';
import { start, type RunningMock } from '../../src/server/server.js';
import { conformance } from '../../src/tools/conformance/cli.js';
import { parseConformanceArgs } from '../../src/tools/conformance/options.js';
import { matches } from '../../src/tools/conformance/select.js';
import { cachedSuite, type SuiteValues } from '../../src/tools/conformance/suite.js';
import { startDouble } from './double.js';
import { allMutants, prefixOf, type Mutant } from './mutants.js';

/** A mutant that no request can tell from the correct server, and why. */
export interface Equivalent {
  readonly id: string;
  readonly reason: string;
}

/** The outcome of one mutant. */
export interface MutantResult {
  readonly mutant: Mutant;
  /** Killed: the runner failed the run, and a failed case names the weakened rule. */
  readonly killed: boolean;
  readonly failed: readonly string[];
  readonly code: number;
}

/** The mutation score of the suite. */
export interface Score {
  readonly results: readonly MutantResult[];
  readonly killed: number;
  readonly total: number;
  /** Survivors listed as equivalent, with their reasons. */
  readonly equivalent: readonly (MutantResult & { reason: string })[];
  /** Survivors listed as known gaps of the suite, each with what would catch it. */
  readonly gaps: readonly (MutantResult & { reason: string })[];
  /** Survivors that are not listed: each one a gap nobody has looked at. */
  readonly survivors: readonly MutantResult[];
  /** Listed equivalents that no longer survive (the list is stale). */
  readonly stale: readonly string[];
}

/** The equivalent mutants, each with its reason (test/mutation/equivalent.json). */
export const EQUIVALENT_FILE = fileURLToPath(new URL('./equivalent.json', import.meta.url));
const listed = (): { equivalent: Equivalent[]; gaps?: Equivalent[] } =>
  JSON.parse(readFileSync(EQUIVALENT_FILE, 'utf8')) as { equivalent: Equivalent[]; gaps?: Equivalent[] };
export const readEquivalents = (): Equivalent[] => listed().equivalent;
/** The known gaps: survivors a check could catch, not written yet (the same file). */
export const readGaps = (): Equivalent[] => listed().gaps ?? [];

/** The runner's default values against the mock (the same the CLI fills the suite with). */
export function runnerValues(): Record<string, string> {
  const options = parseConformanceArgs(
    ['--base-url', 'http://x', '--api-key', 'k'],
    new Catalogue(SchemaRegistry.shared()),
    {},
  );
  if (options === 'help' || options === 'version') throw new Error(`unexpected ${options}`);
  return options.values as unknown as Record<string, string>;
}

/**
 * The cases a mutant's run plays: those of its operation (in its profile) whose id names the weakened rule. A mutant
 * is killed when a failed case names the rule, and a case's verdict is its own (each sends its own requests), so the
 * cases that cannot name it would change nothing but the time (one case in six names the rule).
 */
function casesFor(mutant: Mutant, values: Record<string, string>): string[] {
  const prefix = prefixOf(mutant.operation, values);
  return cachedSuite(SchemaRegistry.shared(), values as unknown as SuiteValues)
    .cases.filter((c) => (!mutant.documented || c.profile === 'documented') && matches(c, prefix) && mutant.names(c.id))
    .map((c) => c.id);
}

async function runOne(
  mutant: Mutant,
  index: number,
  double: string,
  values: Record<string, string>,
): Promise<MutantResult> {
  const only = casesFor(mutant, values);
  // No case names the rule: nothing could kill it.
  if (!only.length) return { mutant, code: 0, failed: [], killed: false };
  let stdout = '';
  const argv = [
    '--base-url',
    `${double}/m/${index}`,
    '--api-key',
    'sk-mock-default',
    '--reporter',
    'json',
    '--profile',
    mutant.documented ? 'documented' : 'full',
    '--only',
    only.join(','),
    '--concurrency',
    '8',
    '--retries',
    '0',
  ];
  const code = await conformance(argv, { stdout: (t) => void (stdout += t), stderr: () => {}, env: {} });
  const report = JSON.parse(stdout) as { cases: { id: string; verdict: string }[] };
  // Only failures kill: in the documented profile a should case that departs is a warning, so a mutant of
  // a document rule that only a should case notices survives (the shapes it describes are judged by full).
  const failed = report.cases.filter((c) => c.verdict === 'fail').map((c) => c.id);
  return { mutant, code, failed, killed: code === 1 && failed.some((id) => mutant.names(id)) };
}

/** Generates every mutant, plays each against the runner (a few at a time) and scores the suite. */
export async function score(options: { concurrency?: number; only?: (m: Mutant) => boolean } = {}): Promise<Score> {
  const values = runnerValues();
  const mutants = allMutants(values).filter(options.only ?? (() => true));
  let mock: RunningMock | undefined;
  let double: { url: string; close(): Promise<void> } | undefined;
  try {
    mock = await start({ port: 0, logLevel: 'silent', journalSize: 0 });
    double = await startDouble(mutants, mock.url);
    const results: MutantResult[] = new Array(mutants.length);
    let next = 0;
    const worker = async () => {
      while (next < mutants.length) {
        const i = next++;
        results[i] = await runOne(mutants[i]!, i, double!.url, values);
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
    const equivalents = new Map(readEquivalents().map((e) => [e.id, e.reason]));
    const gaps = new Map(readGaps().map((e) => [e.id, e.reason]));
    const alive = results.filter((r) => !r.killed);
    return {
      results,
      killed: results.length - alive.length,
      total: results.length,
      equivalent: alive
        .filter((r) => equivalents.has(r.mutant.id))
        .map((r) => ({ ...r, reason: equivalents.get(r.mutant.id)! })),
      gaps: alive.filter((r) => gaps.has(r.mutant.id)).map((r) => ({ ...r, reason: gaps.get(r.mutant.id)! })),
      survivors: alive.filter((r) => !equivalents.has(r.mutant.id) && !gaps.has(r.mutant.id)),
      stale: [...equivalents.keys(), ...gaps.keys()].filter((id) => !alive.some((r) => r.mutant.id === id)),
    };
  } finally {
    await double?.close();
    await mock?.close();
  }
}
