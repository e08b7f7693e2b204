import { xml } from '../../conformance/reporters/junit.js';
import { attemptLines, outcomeText, outputTail, type CheckReport, type CheckReporter, type ScenarioResult } from '../report.js';

const seconds = (ms: number) => (ms / 1000).toFixed(3);

function testcase({ scenario, grade }: ScenarioResult): string {
  const head = `    <testcase classname="client-check" name="${xml(`${scenario.id}: ${scenario.title}`)}" time="${seconds(grade.outcome?.ms ?? 0)}"`;
  if (grade.verdict === 'pass') return `${head}/>`;
  if (grade.verdict === 'not-applicable') return `${head}>\n      <skipped message="${xml(`not applicable: ${grade.reason ?? ''}`)}"/>\n    </testcase>`;
  const message = grade.failures.map((f) => `expected ${f.expected}, got ${f.actual}`).join('; ');
  const detail = [
    `why: ${scenario.why}`,
    ...grade.failures.map((f) => `[${f.check}] expected: ${f.expected}\n[${f.check}] actual:   ${f.actual}`),
    'journal:',
    ...attemptLines(grade),
    `client: ${outcomeText(grade)}`,
    ...outputTail(grade),
  ].join('\n');
  return `${head}>\n      <failure message="${xml(message.slice(0, 500))}" type="${xml(grade.failures[0]?.check ?? 'client-check')}">${xml(detail)}</failure>\n    </testcase>`;
}

/** JUnit XML: one testsuite, one testcase per scenario; not applicable is skipped. */
export function junitReporter(): CheckReporter {
  return {
    end({ results, summary }: CheckReport) {
      const attrs = `tests="${summary.total}" failures="${summary.failed}" errors="0" skipped="${summary.notApplicable}" time="${seconds(summary.ms)}"`;
      return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="unified-ai-mock client-check" ${attrs}>\n  <testsuite name="client-check" ${attrs}>\n${results.map(testcase).join('\n')}\n  </testsuite>\n</testsuites>\n`;
    },
  };
}
