import type { Report, Reporter } from '../report.js';

/** One JSON document: the run, a summary, and one object per case with its level, request, verdict and failures (a
 * `warn` verdict's too). */
export function jsonReporter(): Reporter {
  return {
    end({ info, results, summary }: Report) {
      const cases = results.map((r) => ({
        id: r.case.id,
        operation: r.case.operation,
        description: r.case.description,
        rule: r.case.rule,
        tags: r.case.tags,
        level: r.case.level,
        billable: r.case.billable,
        cost: r.case.cost,
        verdict: r.verdict,
        ...(r.reason ? { reason: r.reason } : {}),
        expected: { status: r.case.expect.status, checks: r.case.expect.checks },
        ...(r.status !== undefined ? { actual: { status: r.status } } : {}),
        failures: r.failures,
        ...(r.departures ? { departures: r.departures } : {}),
        request: r.request,
        attempts: r.attempts,
        ms: r.ms,
      }));
      return `${JSON.stringify({ tool: 'unified-ai-mock conformance', target: info.target, profile: info.profile, faultHeaders: info.faultHeaders ?? null, ...(info.upstream !== undefined ? { upstream: info.upstream } : {}), ...(info.baseline !== undefined ? { baseline: { url: info.baseline, departedCases: results.filter((r) => r.departures?.length).length } } : {}), summary, cases }, null, 2)}\n`;
    },
  };
}
