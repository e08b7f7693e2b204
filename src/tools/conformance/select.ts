import type { Case, Profile } from '../../verdict/types.js';
import { UsageError } from '../../verdict/commandLine.js';

const globToRegExp = (glob: string) =>
  new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );

/** True when a case matches a pattern: one of its tags, its operation, its id, an id prefix (up to a dot), or a glob
 * over ids. */
export function matches(c: Case, pattern: string): boolean {
  if (c.tags.includes(pattern) || c.operation === pattern || c.id === pattern || c.id.startsWith(`${pattern}.`))
    return true;
  return /[*?]/.test(pattern) && globToRegExp(pattern).test(c.id);
}

/** What to run: the profile's cases, narrowed by --only, --skip and --skip-billable. */
interface Selection {
  readonly profile: Profile;
  readonly only: readonly string[];
  readonly skip: readonly string[];
  readonly skipBillable: boolean;
}

/** The cases a run sends, in suite order, and how many the filters left out. */
export function selectCases(all: readonly Case[], s: Selection): { cases: Case[]; filtered: number } {
  const inProfile = all.filter((c) => s.profile === 'full' || c.profile === 'documented');
  const cases = inProfile.filter(
    (c) =>
      (!s.only.length || s.only.some((p) => matches(c, p))) &&
      !s.skip.some((p) => matches(c, p)) &&
      !(s.skipBillable && c.billable),
  );
  return { cases, filtered: inProfile.length - cases.length };
}

/** Checks --only, --skip and --unsupported names against the suite, so a typo is a usage error, not a silent no-op. */
export function checkNames(all: readonly Case[], s: Selection & { unsupported: readonly string[] }): void {
  for (const [flag, patterns] of [
    ['only', s.only],
    ['skip', s.skip],
  ] as const) {
    for (const p of patterns)
      if (!all.some((c) => matches(c, p))) throw new UsageError(`--${flag} '${p}' matches no case`);
  }
  const names = new Set(all.flatMap((c) => [c.operation, ...c.tags]));
  for (const u of s.unsupported)
    if (!names.has(u))
      throw new UsageError(
        `--unsupported '${u}' is neither an operation nor a tag; operations: ${[...new Set(all.map((c) => c.operation))].join(', ')}`,
      );
}
