import type { Score } from './run.js';

const percent = (s: Score): string => `${((100 * s.killed) / s.total).toFixed(1)}%`;

/** The score as the docs publish it: killed/total by family, then every equivalent mutant with its reason. */
export function renderScore(s: Score): string {
  const families = [...new Set(s.results.map((r) => r.mutant.family))].sort();
  const rows = families.map((f) => {
    const of = s.results.filter((r) => r.mutant.family === f);
    return `| ${f} | ${of.filter((r) => r.killed).length} | ${of.length} |`;
  });
  const equivalents = s.equivalent.map((e) => `- \`${e.mutant.id}\`: ${e.reason}`);
  const survivors = s.survivors.map((r) => `- \`${r.mutant.id}\`: ${r.mutant.rule}`);
  return [
    `**Mutation score: ${s.killed} of ${s.total} mutants killed (${percent(s)}).**`,
    '',
    '| family | killed | mutants |',
    '|---|---|---|',
    ...rows,
    '',
    `Equivalent mutants (${s.equivalent.length}), which no request can tell from a correct server:`,
    '',
    ...equivalents,
    ...(survivors.length ? ['', `Surviving mutants (${survivors.length}):`, '', ...survivors] : []),
    '',
  ].join('\n');
}
