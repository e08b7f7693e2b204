import { schemaId } from '../../contract/schemas.js';
import type { Report, Reporter } from '../report.js';

/** Where the JSON report's schema is published: schemas/conformance-report.json, by its `$id`. */
const REPORT_SCHEMA = schemaId('conformance-report.json');

/**
 * The JSON report as an object: the run, a summary, and one object per case with its level, request, answer, verdict
 * and failures (a `warn` verdict's too). Its shape is schemas/conformance-report.json; the HTML report embeds it.
 */
export function reportDocument({ info, results, summary }: Report) {
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
    ...(r.response ? { response: r.response } : {}),
    ...(r.baselineResponse ? { baselineResponse: r.baselineResponse } : {}),
    attempts: r.attempts,
    ms: r.ms,
  }));
  return {
    $schema: REPORT_SCHEMA,
    tool: 'unified-ai-mock conformance',
    target: info.target,
    profile: info.profile,
    faultHeaders: info.faultHeaders ?? null,
    ...(info.upstream !== undefined ? { upstream: info.upstream } : {}),
    ...(info.baseline !== undefined
      ? { baseline: { url: info.baseline, departedCases: results.filter((r) => r.departures?.length).length } }
      : {}),
    summary,
    cases,
  };
}

/** One JSON document, valid against schemas/conformance-report.json (see reportDocument). */
export function jsonReporter(): Reporter {
  return { end: (report: Report) => `${JSON.stringify(reportDocument(report), null, 2)}\n` };
}
