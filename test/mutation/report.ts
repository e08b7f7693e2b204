import type { Score } from './run.js';

/** Killed of the mutants a request can tell from a correct server (the equivalent ones left out, as mutation scores
 * count). */
export const scoreOf = (s: Score): number => s.killed / (s.total - s.equivalent.length);
const percent = (s: Score): string => `${(100 * scoreOf(s)).toFixed(1)}%`;
const ratio = ({ killed, counted }: { killed: number; counted: number }): string =>
  `${((100 * killed) / counted).toFixed(1)}%`;

type Results = Score['results'];

/** Killed / mutants a request can tell apart, of some of the results. */
function split(s: Score, of: Results): { killed: number; counted: number } {
  const equivalent = new Set(s.equivalent.map((e) => e.mutant.id));
  return { killed: of.filter((r) => r.killed).length, counted: of.filter((r) => !equivalent.has(r.mutant.id)).length };
}

/**
 * The score as the docs publish it: killed/total by family, split into the rules the API document states
 * (must: the documented profile must kill them; a case that only warns, a should case, kills nothing there)
 * and the mock's own rules with the document's should shapes (the full profile), then every equivalent
 * mutant and known gap with its reason.
 */
export function renderScore(s: Score): string {
  const families = [...new Set(s.results.map((r) => r.mutant.family))].sort();
  const cell = (of: Results) => {
    const { killed, counted } = split(s, of);
    return `${killed} / ${counted}`;
  };
  const rows = families.map((f) => {
    const of = s.results.filter((r) => r.mutant.family === f);
    return `| ${f} | ${of.filter((r) => r.killed).length} | ${of.length} | ${cell(of.filter((r) => r.mutant.documented))} | ${cell(of.filter((r) => !r.mutant.documented))} |`;
  });
  const must = split(
    s,
    s.results.filter((r) => r.mutant.documented),
  );
  const own = split(
    s,
    s.results.filter((r) => !r.mutant.documented),
  );
  const equivalents = s.equivalent.map((e) => `- \`${e.mutant.id}\`: ${e.reason}`);
  const gaps = s.gaps.map((e) => `- \`${e.mutant.id}\`: ${e.reason}`);
  const survivors = s.survivors.map((r) => `- \`${r.mutant.id}\`: ${r.mutant.rule}`);
  return [
    `**Mutation score: ${s.killed} of ${s.total - s.equivalent.length} mutants killed (${percent(s)}); ${s.equivalent.length} more are equivalent.**`,
    '',
    `Of the rules the API document states (must, judged by the \`documented\` profile): ${must.killed} of ${must.counted} killed (${ratio(must)}). ` +
      `Of the mock's own rules and the shapes the document only describes (should, judged by \`full\`): ${own.killed} of ${own.counted} killed (${ratio(own)}).`,
    '',
    "| family | killed | mutants | document rules (must): killed / mutants | the mock's rules and should shapes (full): killed / mutants |",
    '|---|---|---|---|---|',
    ...rows,
    '',
    `Equivalent mutants (${s.equivalent.length}), which no request can tell from a correct server:`,
    '',
    ...equivalents,
    ...(gaps.length
      ? ['', `Known gaps (${gaps.length}), mutants the suite does not catch yet, and what would:`, '', ...gaps]
      : []),
    ...(survivors.length ? ['', `Surviving mutants (${survivors.length}):`, '', ...survivors] : []),
    '',
  ].join('\n');
}
