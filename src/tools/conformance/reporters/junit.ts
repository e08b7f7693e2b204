import { requestLines, type Report, type Reporter } from '../report.js';
import type { CaseResult } from '../types.js';

/** Text escaped for XML attributes and content; characters XML 1.0 forbids are dropped. */
export const xml = (s: string): string =>
  s
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');

const seconds = (ms: number) => (ms / 1000).toFixed(3);

function testcase(r: CaseResult): string {
  const head = `    <testcase classname="${xml(r.case.operation)}" name="${xml(`${r.case.id}: ${r.case.description}`)}" time="${seconds(r.ms)}"`;
  if (r.verdict === 'pass') return `${head}/>`;
  if (r.verdict !== 'fail') return `${head}>\n      <skipped message="${xml(`${r.verdict}: ${r.reason ?? ''}`)}"/>\n    </testcase>`;
  const message = r.failures.map((f) => `expected ${f.expected}, got ${f.actual}`).join('; ');
  const detail = [`rule: ${r.case.rule}`, ...requestLines(r), ...r.failures.map((f) => `[${f.check}] expected: ${f.expected}\n[${f.check}] actual:   ${f.actual}`)].join('\n');
  return `${head}>\n      <failure message="${xml(message.slice(0, 500))}" type="${xml(r.failures[0]?.check ?? 'status')}">${xml(detail)}</failure>\n    </testcase>`;
}

/** JUnit XML: one testsuite per operation, one testcase per case; inconclusive and not applicable are skipped. */
export function junitReporter(): Reporter {
  return {
    end({ results, summary }: Report) {
      const byOperation = new Map<string, CaseResult[]>();
      for (const r of results) byOperation.set(r.case.operation, [...(byOperation.get(r.case.operation) ?? []), r]);
      const suites = [...byOperation].map(([op, rs]) => {
        const failures = rs.filter((r) => r.verdict === 'fail').length;
        const skipped = rs.filter((r) => r.verdict === 'inconclusive' || r.verdict === 'not-applicable').length;
        const time = seconds(rs.reduce((t, r) => t + r.ms, 0));
        return `  <testsuite name="${xml(op)}" tests="${rs.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${time}">\n${rs.map(testcase).join('\n')}\n  </testsuite>`;
      });
      const skipped = summary.inconclusive + summary.notApplicable;
      return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="unified-ai-mock conformance" tests="${summary.total}" failures="${summary.failed}" errors="0" skipped="${skipped}" time="${seconds(summary.ms)}">\n${suites.join('\n')}\n</testsuites>\n`;
    },
  };
}
