import { countVerdicts } from '../../verdict/report.js';
import type { Reporter, RunReport } from '../../verdict/reporterChoice.js';
import type { Attempt } from './attempts.js';
import { perSecond, type Grade } from './grade.js';
import type { Scenario } from './scenarios.js';

/** What every reporter knows before the first scenario runs. */
export interface CheckInfo {
  /** The command under test, as given after `--` (or a name for a callback). */
  readonly client: string;
  readonly clientTimeoutMs?: number;
  readonly scenarios: readonly Scenario[];
}

/** One scenario's result: the scenario and its grade. */
export interface ScenarioResult {
  readonly scenario: Scenario;
  readonly grade: Grade;
}

/** Counts for the end of a run. */
interface CheckSummary {
  readonly total: number;
  readonly passed: number;
  readonly failed: number;
  readonly notApplicable: number;
  readonly ms: number;
}

/** A finished run. */
export type CheckReport = RunReport<CheckInfo, ScenarioResult, CheckSummary>;

/** Receives a run as it happens and renders it (the reporter shape of src/verdict/, the conformance runner's too). */
export type CheckReporter = Reporter<CheckInfo, ScenarioResult, CheckSummary>;

/** Counts verdicts (a scenario is never a warning nor inconclusive, so the summary has no such counts). */
export function summarize(results: readonly ScenarioResult[], ms: number): CheckSummary {
  const { total, passed, failed, notApplicable } = countVerdicts(results.map((r) => r.grade.verdict));
  return { total, passed, failed, notApplicable, ms };
}

/** One attempt as a word: its status, or what happened instead of one. */
function shortAttempt(a: Attempt): string {
  const took = a.end - a.start;
  if (a.stream === 'aborted') return `${a.status || 'held'}, left after ${took} ms`;
  if (a.status === 0) return 'no response';
  return a.stream && a.stream !== 'completed' ? `${a.status} ${a.stream}` : String(a.status);
}

/** How the client ended, in a few words. */
export function outcomeText(g: Grade): string {
  const o = g.outcome;
  if (!o) return 'not run';
  if (o.stopped) return `stopped (${o.stopped === 'deadline' ? 'past its deadline' : 'past the attempts allowed'})`;
  if (o.error !== undefined) return `threw ${o.error.split('\n')[0]}`;
  return o.exitCode === null ? `ended by ${o.signal ?? 'a signal'}` : `exit ${o.exitCode}`;
}

/** The attempts in one line: `429 +1003 ms 429 +1002 ms 429`, or counts per second when there are many. */
export function attemptsLine(g: Grade): string {
  const a = g.attempts;
  if (!a.length) return 'no request';
  if (g.requests > 1 || a.length > 8)
    return `${a.length} attempts for ${g.requests} request${g.requests === 1 ? '' : 's'}, per second: ${perSecond(a).join(', ')}`;
  const steps = a.map((x) => `${x.gapMs === undefined ? '' : `+${x.gapMs} ms `}${shortAttempt(x)}`);
  return `${a.length} attempt${a.length === 1 ? '' : 's'}: ${steps.join(', ')}`;
}

/** At most this many attempts are listed one per line in a failure. */
const MAX_LISTED = 20;

/** The journal of a failed scenario, one attempt a line, as the grader read it. */
export function attemptLines(g: Grade): string[] {
  const lines = g.attempts.slice(0, MAX_LISTED).map((a) => {
    const parts = [
      `#${a.n}`,
      `at ${a.start} ms`,
      `${a.end - a.start} ms long`,
      a.status === 0 ? 'no status' : `status ${a.status}`,
    ];
    if (g.requests > 1) parts.push(`request ${a.request}`);
    if (a.gapMs !== undefined) parts.push(`${a.gapMs} ms after the previous attempt`);
    if (a.retryAfterMs !== undefined) parts.push(`retry-after-ms ${a.retryAfterMs}`);
    if (a.retryCount !== undefined) parts.push(`x-stainless-retry-count ${a.retryCount}`);
    if (a.stream) parts.push(`stream ${a.stream}`);
    if (a.bodyHash) parts.push(`body ${a.bodyHash.slice(0, 12)}`);
    return parts.join(', ');
  });
  if (g.attempts.length > MAX_LISTED) lines.push(`... and ${g.attempts.length - MAX_LISTED} more attempts`);
  return lines;
}

/** The last lines of the client's output, for a failure. */
export function outputTail(g: Grade, lines = 12): string[] {
  const text = g.outcome?.output?.trimEnd();
  return text ? text.split('\n').slice(-lines) : [];
}
