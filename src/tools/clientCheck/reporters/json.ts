import type { CheckReport, CheckReporter } from '../report.js';

/** One JSON document: the run, a summary, and per scenario its verdict, failures, attempts (as read from the journal)
 * and the client's outcome. */
export function jsonReporter(): CheckReporter {
  return {
    end({ info, results, summary }: CheckReport) {
      const scenarios = results.map(({ scenario, grade }) => ({
        id: scenario.id,
        title: scenario.title,
        tags: scenario.tags ?? [],
        verdict: grade.verdict,
        ...(grade.reason ? { reason: grade.reason } : {}),
        failures: grade.failures,
        requests: grade.requests,
        attempts: grade.attempts,
        ...(grade.outcome ? { client: grade.outcome } : {}),
      }));
      return `${JSON.stringify({ tool: 'unified-ai-mock client-check', client: info.client, clientTimeoutMs: info.clientTimeoutMs ?? null, summary, scenarios }, null, 2)}\n`;
    },
  };
}
