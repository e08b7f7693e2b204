import type { Score } from './run.js';

/** Killed of the mutants a request can tell from a correct server (the equivalent ones left out, as mutation scores count). */
export const scoreOf = (s: Score): number => s.killed / (s.total - s.equivalent.length);
const percent = (s: Score): string => `${(100 * scoreOf(s)).toFixed(1)}%`;

/** The score as the docs publish it: killed/total by family, then every equivalent mutant and known gap with its reason. */
export function renderScore(s: Score): string {
  const families = [...new Set(s.results.map((r) => r.mutant.family))].sort();
  const rows = families.map((f) => {
    const of = s.results.filter((r) => r.mutant.family === f);
    return `| ${f} | ${of.filter((r) => r.killed).length} | ${of.length} |`;
  });
  const equivalents = s.equivalent.map((e) => `- \`${e.mutant.id}\`: ${e.reason}`);
  const gaps = s.gaps.map((e) => `- \`${e.mutant.id}\`: ${e.reason}`);
  const survivors = s.survivors.map((r) => `- \`${r.mutant.id}\`: ${r.mutant.rule}`);
  return [
    `**Mutation score: ${s.killed} of ${s.total - s.equivalent.length} mutants killed (${percent(s)}); ${s.equivalent.length} more are equivalent.**`,
    '',
    '| family | killed | mutants |',
    '|---|---|---|',
    ...rows,
    '',
    `Equivalent mutants (${s.equivalent.length}), which no request can tell from a correct server:`,
    '',
    ...equivalents,
    ...(gaps.length ? ['', `Known gaps (${gaps.length}), mutants the suite does not catch yet, and what would:`, '', ...gaps] : []),
    ...(survivors.length ? ['', `Surviving mutants (${survivors.length}):`, '', ...survivors] : []),
    '',
  ].join('\n');
}
