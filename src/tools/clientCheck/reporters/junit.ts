import {
  failedTestcase,
  failureLines,
  seconds,
  skippedTestcase,
  testcaseHead,
} from '../../../verdict/reporters/junit.js';
import {
  attemptLines,
  outcomeText,
  outputTail,
  type CheckReport,
  type CheckReporter,
  type ScenarioResult,
} from '../report.js';

function testcase({ scenario, grade }: ScenarioResult): string {
  const head = testcaseHead('client-check', `${scenario.id}: ${scenario.title}`, grade.outcome?.ms ?? 0);
  if (grade.verdict === 'pass') return `${head}/>`;
  if (grade.verdict === 'not-applicable') return skippedTestcase(head, `not applicable: ${grade.reason ?? ''}`);
  const detail = [
    `why: ${scenario.why}`,
    ...failureLines(grade.failures),
    'journal:',
    ...attemptLines(grade),
    `client: ${outcomeText(grade)}`,
    ...outputTail(grade),
  ];
  return failedTestcase(head, grade.failures, 'client-check', detail);
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
