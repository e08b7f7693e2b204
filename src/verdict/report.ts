import { addCost, zeroCost } from './cost.js';
import type { Reporter as ReporterOf, RunReport } from './reporterChoice.js';
import type { Case, CaseResult, Profile, Summary, Verdict, VerdictCounts } from './types.js';

/** What every reporter knows about the run before the first result. */
export interface RunInfo {
  readonly target: string;
  readonly profile: Profile;
  /** Whether the target honours the mock's fault headers (undefined: not probed). */
  readonly faultHeaders?: boolean;
  readonly cases: readonly Case[];
  /** The implementation the target is compared with (--baseline), if any. */
  readonly baseline?: string;
  /** The gateway profile's upstream: the mock behind the target (its URL), if any. */
  readonly upstream?: string;
}

/** A finished run. */
export type Report = RunReport<RunInfo, CaseResult, Summary>;

/** Receives a run as it happens and renders it. */
export type Reporter = ReporterOf<RunInfo, CaseResult, Summary>;

/** Counts verdicts: a conformance run's cases, a client check's scenarios. */
export function countVerdicts(verdicts: readonly Verdict[]): VerdictCounts {
  const counts: VerdictCounts = {
    total: verdicts.length,
    passed: 0,
    failed: 0,
    warnings: 0,
    inconclusive: 0,
    notApplicable: 0,
  };
  for (const v of verdicts) {
    if (v === 'pass') counts.passed++;
    else if (v === 'fail') counts.failed++;
    else if (v === 'warn') counts.warnings++;
    else if (v === 'inconclusive') counts.inconclusive++;
    else counts.notApplicable++;
  }
  return counts;
}

/** Counts verdicts and the paid units of billable cases that were sent. */
export function summarize(results: readonly CaseResult[], ms: number): Summary {
  const s: Summary = { ...countVerdicts(results.map((r) => r.verdict)), billable: 0, cost: zeroCost(), ms };
  for (const r of results) {
    if (r.case.billable && r.attempts > 0) {
      s.billable++;
      addCost(s.cost, r.case.cost);
    }
  }
  return s;
}

/** The closing line every text report ends with; a report whose results are never warnings or inconclusive
 * (client-check's) leaves those counts out. */
export const countsLine = (
  s: Pick<VerdictCounts, 'passed' | 'failed' | 'notApplicable'> & {
    readonly warnings?: number;
    readonly inconclusive?: number;
  },
): string =>
  `${s.passed} passed, ${s.failed} failed, ${s.warnings === undefined ? '' : `${s.warnings} warning${s.warnings === 1 ? '' : 's'}, `}${s.inconclusive === undefined ? '' : `${s.inconclusive} inconclusive, `}${s.notApplicable} not applicable`;

/** A request as a few readable lines (key already masked). */
export function requestLines(r: CaseResult): string[] {
  const lines = [`${r.request.method} ${r.request.url}`];
  for (const [k, v] of Object.entries(r.request.headers)) lines.push(`${k}: ${v}`);
  if (r.request.body !== undefined)
    lines.push(typeof r.request.body === 'string' ? r.request.body : JSON.stringify(r.request.body));
  return lines;
}
