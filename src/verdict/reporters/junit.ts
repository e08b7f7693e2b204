import { requestLines, type Report, type Reporter } from '../report.js';
import type { CaseResult, CheckFailure } from '../types.js';

/** Text escaped for XML attributes and content; characters XML 1.0 forbids are dropped. */
export const xml = (s: string): string =>
  s
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');

/** Milliseconds as JUnit's seconds. */
export const seconds = (ms: number): string => (ms / 1000).toFixed(3);

// The testcase elements below are client-check's too: its JUnit report reads as this one does.

/** A failed check of a case or a scenario. */
type Failure = CheckFailure<string>;

/** The start of a `<testcase>` element; a passed case closes it with `/>`. */
export const testcaseHead = (classname: string, name: string, ms: number): string =>
  `    <testcase classname="${xml(classname)}" name="${xml(name)}" time="${seconds(ms)}"`;

/** A skipped testcase, with why. */
export const skippedTestcase = (head: string, message: string): string =>
  `${head}>\n      <skipped message="${xml(message)}"/>\n    </testcase>`;

/** A failed testcase: every failure in the message (cut to 500 characters), the first one's check as the type (else
 * `type`), and `detail` as the text. */
export function failedTestcase(
  head: string,
  failures: readonly Failure[],
  type: string,
  detail: readonly string[],
): string {
  const message = failures.map((f) => `expected ${f.expected}, got ${f.actual}`).join('; ');
  return `${head}>\n      <failure message="${xml(message.slice(0, 500))}" type="${xml(failures[0]?.check ?? type)}">${xml(detail.join('\n'))}</failure>\n    </testcase>`;
}

/** A failure's expected and actual, one line each, for the text of a failed testcase. */
export const failureLines = (failures: readonly Failure[]): string[] =>
  failures.map((f) => `[${f.check}] expected: ${f.expected}\n[${f.check}] actual:   ${f.actual}`);

/**
 * A warning: JUnit has no such status, and CI tools (GitHub, GitLab, Jenkins) show `<skipped>` as
 * skipped, which hides it. A passed testcase with the departure in `<system-out>`, its first line
 * naming the level, is shown, as passed, with its text. (JUnit's schema has no properties on a testcase.)
 */
function warnedTestcase(head: string, r: CaseResult): string {
  const text = [`warning (level should): ${r.case.rule}`, ...requestLines(r), ...failureLines(r.failures)].join('\n');
  return `${head}>\n      <system-out>${xml(text)}</system-out>\n    </testcase>`;
}

function testcase(r: CaseResult): string {
  const head = testcaseHead(r.case.operation, `${r.case.id}: ${r.case.description}`, r.ms);
  if (r.verdict === 'pass') return `${head}/>`;
  if (r.verdict === 'warn') return warnedTestcase(head, r);
  if (r.verdict !== 'fail') return skippedTestcase(head, `${r.verdict}: ${r.reason ?? ''}`);
  return failedTestcase(head, r.failures, 'status', [
    `rule: ${r.case.rule}`,
    ...requestLines(r),
    ...failureLines(r.failures),
  ]);
}

/**
 * With --baseline, a testsuite of its own: one failed testcase per case whose answer departs from the baseline's, so
 * the case's own testcase keeps its verdict against the API document.
 */
function baselineSuite(results: readonly CaseResult[], baseline: string): { xml: string; failures: number } {
  const departed = results.filter((r) => r.departures?.length);
  const cases = departed.map((r) =>
    failedTestcase(
      testcaseHead('baseline', `${r.case.id}: ${r.case.description}`, 0),
      r.departures!.map((d) => ({ check: d.check, expected: `${d.what} ${d.baseline}`, actual: d.target })),
      'baseline',
      [
        `departs from the baseline ${baseline}`,
        ...r.departures!.map((d) => `${d.what}: target ${d.target}, baseline ${d.baseline}`),
      ],
    ),
  );
  const body = cases.length ? `>\n${cases.join('\n')}\n  </testsuite>` : '/>';
  return {
    xml: `  <testsuite name="baseline" tests="${cases.length}" failures="${cases.length}" errors="0" skipped="0" time="0.000"${body}`,
    failures: cases.length,
  };
}

/**
 * JUnit XML, valid against Jenkins' JUnit schema (test/support/junit/junit-10.xsd): one testsuite per operation, one
 * testcase per case; inconclusive and not applicable are skipped, a warning passes with its text; with a baseline, a
 * `baseline` testsuite of the cases that depart from it. The root carries tests, failures and errors (the schema has
 * no skipped count there: each testsuite has its own).
 */
export function junitReporter(): Reporter {
  return {
    end({ info, results, summary }: Report) {
      const byOperation = new Map<string, CaseResult[]>();
      for (const r of results) byOperation.set(r.case.operation, [...(byOperation.get(r.case.operation) ?? []), r]);
      const suites = [...byOperation].map(([op, rs]) => {
        const failures = rs.filter((r) => r.verdict === 'fail').length;
        const skipped = rs.filter((r) => r.verdict === 'inconclusive' || r.verdict === 'not-applicable').length;
        const time = seconds(rs.reduce((t, r) => t + r.ms, 0));
        return `  <testsuite name="${xml(op)}" tests="${rs.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${time}">\n${rs.map(testcase).join('\n')}\n  </testsuite>`;
      });
      const compared = info.baseline === undefined ? undefined : baselineSuite(results, info.baseline);
      if (compared) suites.push(compared.xml);
      const tests = summary.total + (compared?.failures ?? 0);
      const failed = summary.failed + (compared?.failures ?? 0);
      return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="unified-ai-mock conformance" tests="${tests}" failures="${failed}" errors="0" time="${seconds(summary.ms)}">\n${suites.join('\n')}\n</testsuites>\n`;
    },
  };
}
