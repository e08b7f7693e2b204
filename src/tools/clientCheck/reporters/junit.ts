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

/** JUnit XML, valid against Jenkins' JUnit schema as the conformance runner's is: one testsuite, one testcase per
 * scenario; not applicable is skipped (counted on the testsuite: the schema has no skipped count on the root). */
export function junitReporter(): CheckReporter {
  return {
    end({ results, summary }: CheckReport) {
      const counts = `tests="${summary.total}" failures="${summary.failed}" errors="0"`;
      const time = `time="${seconds(summary.ms)}"`;
      return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="unified-ai-mock client-check" ${counts} ${time}>\n  <testsuite name="client-check" ${counts} skipped="${summary.notApplicable}" ${time}>\n${results.map(testcase).join('\n')}\n  </testsuite>\n</testsuites>\n`;
    },
  };
}
