import { countsLine } from '../../../verdict/report.js';
import {
  attemptLines,
  attemptsLine,
  outcomeText,
  outputTail,
  type CheckInfo,
  type CheckReport,
  type CheckReporter,
  type ScenarioResult,
} from '../report.js';

const MARK: Record<ScenarioResult['grade']['verdict'], string> = {
  pass: 'pass',
  fail: 'FAIL',
  'not-applicable': 'n/a ',
};
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Console output: a header, one line per scenario as it finishes, then each failure with its journal, and the counts.
 */
export function prettyReporter(write: (text: string) => void): CheckReporter {
  let width = 0;
  return {
    start(info: CheckInfo) {
      width = Math.max(0, ...info.scenarios.map((s) => s.id.length));
      const timeout =
        info.clientTimeoutMs === undefined ? 'no client timeout declared' : `client timeout ${info.clientTimeoutMs} ms`;
      write(
        `Client check of ${info.client} (${timeout}): ${info.scenarios.length} scenario${info.scenarios.length === 1 ? '' : 's'}\n`,
      );
    },
    result({ scenario, grade }: ScenarioResult, done: number, total: number) {
      const what = grade.verdict === 'not-applicable' ? grade.reason : `${attemptsLine(grade)}; ${outcomeText(grade)}`;
      const time = grade.outcome?.ms ? ` (${seconds(grade.outcome.ms)})` : '';
      write(`  ${MARK[grade.verdict]}  ${scenario.id.padEnd(width)}  ${what}${time}  [${done}/${total}]\n`);
    },
    end({ results, summary }: CheckReport) {
      const out: string[] = [];
      const failed = results.filter((r) => r.grade.verdict === 'fail');
      if (failed.length) out.push('', 'Failures:');
      failed.forEach(({ scenario, grade }, i) => {
        out.push(
          '',
          `${i + 1}) ${scenario.id}: ${scenario.title}`,
          `   why:      ${scenario.why}`,
          `   good:     ${scenario.good}`,
        );
        for (const f of grade.failures) out.push(`   expected: ${f.expected} [${f.check}]`, `   actual:   ${f.actual}`);
        attemptLines(grade).forEach((line, j) => out.push(`   ${j ? '          ' : 'journal:  '}${line}`));
        out.push(`   client:   ${outcomeText(grade)}`);
        const tail = outputTail(grade);
        if (tail.length) out.push('   output (last lines):', ...tail.map((l) => `     ${l}`));
      });
      out.push(
        '',
        `${summary.total} scenario${summary.total === 1 ? '' : 's'} in ${seconds(summary.ms)}`,
        countsLine(summary),
        '',
      );
      return out.join('\n');
    },
  };
}
