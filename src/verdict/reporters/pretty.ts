import { formatCost } from '../cost.js';
import { countsLine, requestLines, type Report, type Reporter, type RunInfo } from '../report.js';
import type { CaseResult } from '../types.js';

const MARK: Record<CaseResult['verdict'], string> = {
  pass: '.',
  fail: 'F',
  warn: 'W',
  inconclusive: '?',
  'not-applicable': '-',
};
const WIDTH = 60;

/** Console output: a header, one mark per case as it finishes, then failures in detail and the counts. */
export function prettyReporter(write: (text: string) => void): Reporter {
  let column = 0;
  return {
    start(info: RunInfo) {
      const billable = info.cases.filter((c) => c.billable).length;
      write(
        `Conformance (${info.profile} profile) of ${info.target}: ${info.cases.length} cases, ${billable} billable\n`,
      );
      if (info.baseline !== undefined) write(`Compared with the baseline ${info.baseline}\n`);
      if (info.upstream !== undefined) write(`Upstream: ${info.upstream}\n`);
      if (info.faultHeaders !== undefined)
        write(`Fault headers: ${info.faultHeaders ? 'supported' : 'not supported (fault cases are not applicable)'}\n`);
      write('(. pass  F fail  W warning  ? inconclusive  - not applicable)\n');
    },
    result(r: CaseResult, done: number, total: number) {
      write(MARK[r.verdict]);
      column++;
      if (column === WIDTH || done === total) {
        write(` ${done}/${total}\n`);
        column = 0;
      }
    },
    end({ info, results, summary }: Report) {
      const out: string[] = [];
      const detail = (title: string, shown: readonly CaseResult[]) => {
        if (shown.length) out.push('', title);
        shown.forEach((r, i) => {
          out.push(
            '',
            `${i + 1}) ${r.case.id}: ${r.case.description}`,
            `   ${r.case.level === 'should' ? 'should:  ' : 'rule:    '} ${r.case.rule}`,
          );
          requestLines(r).forEach((line, j) => out.push(`   ${j ? '          ' : 'request:  '}${line}`));
          for (const f of r.failures)
            out.push(
              `   expected: ${f.expected}${f.check === 'status' ? '' : ` [${f.check}]`}`,
              `   actual:   ${f.actual}`,
            );
        });
      };
      detail(
        'Failures:',
        results.filter((r) => r.verdict === 'fail'),
      );
      detail(
        'Warnings (the API document describes these shapes without making them rules; --strict fails them):',
        results.filter((r) => r.verdict === 'warn'),
      );
      const departed = results.filter((r) => r.departures?.length);
      if (departed.length) {
        out.push('', `Departures from the baseline (${departed.length} case${departed.length === 1 ? '' : 's'}):`);
        for (const r of departed) {
          out.push('', `  ${r.case.id}: ${r.case.description}`);
          for (const d of r.departures!) out.push(`    ${d.what}: target ${d.target}, baseline ${d.baseline}`);
        }
      }
      // The gateway profile measures what it passes (times, attempts): told here, as the failures are above.
      const measured = info.profile === 'gateway' ? results.filter((r) => r.verdict === 'pass' && r.reason) : [];
      if (measured.length) out.push('', 'Measured:', ...measured.map((r) => `  ${r.case.id}: ${r.reason}`));
      const inconclusive = results.filter((r) => r.verdict === 'inconclusive');
      if (inconclusive.length) out.push('', 'Inconclusive:', ...inconclusive.map((r) => `  ${r.case.id}: ${r.reason}`));
      const reasons = new Map<string, number>();
      for (const r of results)
        if (r.verdict === 'not-applicable') reasons.set(r.reason!, (reasons.get(r.reason!) ?? 0) + 1);
      if (reasons.size)
        out.push(
          '',
          'Not applicable:',
          ...[...reasons].map(([reason, n]) => `  ${n} case${n === 1 ? '' : 's'}: ${reason}`),
        );
      out.push(
        '',
        `${summary.total} cases in ${(summary.ms / 1000).toFixed(1)} s; ${summary.billable} billable sent, estimated paid units: ${formatCost(summary.cost)}`,
      );
      out.push(countsLine(summary), '');
      return out.join('\n');
    },
  };
}
