import type { JournalEntry } from '../../domain/journal/journal.js';
import type { CheckFailure, Verdict as CaseVerdict } from '../../verdict/types.js';
import { attemptsOf, busiestWindow, byRequest, openingBurst, type Attempt } from './attempts.js';
import type { Scenario } from './scenarios.js';

/** A scenario's outcome: the verdicts of a case but warn and inconclusive. Only `fail` fails a run. */
export type Verdict = Exclude<CaseVerdict, 'warn' | 'inconclusive'>;

/** One check the client did not meet: what a well-behaved client does, and what this one did (with the timings that
 * show it). */
export type Finding = CheckFailure<string>;

/** How the client's run ended. */
export interface ClientOutcome {
  /** The command's exit code; for a callback, 0 when it resolved and 1 when it threw. Null when a signal ended it. */
  readonly exitCode: number | null;
  readonly signal?: string;
  /** Set when the run stopped the client: it ran past the deadline, or went on past the attempts allowed. */
  readonly stopped?: 'deadline' | 'attempts';
  /** How long the client ran, in ms (for reports; no check reads it). */
  readonly ms: number;
  /** The error a callback threw, as text. */
  readonly error?: string;
  /** The end of the command's output (stdout and stderr), for the report of a failure. */
  readonly output?: string;
}

/** A scenario, graded. */
export interface Grade {
  readonly scenario: string;
  readonly verdict: Verdict;
  /** Why the scenario is not applicable, or the first failure in a line. */
  readonly reason?: string;
  readonly failures: readonly Finding[];
  readonly attempts: readonly Attempt[];
  /** How many requests (a first try and its retries) the attempts make. */
  readonly requests: number;
  readonly outcome?: ClientOutcome;
}

/** What the run knows besides the journal. */
export interface GradeOptions {
  /** The client's declared timeout (--client-timeout), in ms. */
  readonly clientTimeoutMs?: number;
  /** The deadline the client ran under, in ms (for the message when it was stopped). */
  readonly deadlineMs?: number;
}

/**
 * When requests count as started together: within `burstMs` of the first (clientCheck.burstMs of fixtures/limits.json).
 */
export interface Burst {
  readonly burstMs: number;
}

/** The operation a scenario grades when it names none. */
export const DEFAULT_OPERATION = 'chat.completions';
// More findings of one check add length to a report, not information.
const MAX_PER_CHECK = 3;

/** Why a scenario cannot apply before anything runs (it needs the client's timeout and none was declared). */
export function notApplicableBefore(scenario: Scenario, options: GradeOptions): string | undefined {
  if (scenario.needs?.includes('client-timeout') && options.clientTimeoutMs === undefined) {
    return "needs the client's timeout: declare it with --client-timeout MS (checkClient: clientTimeoutMs)";
  }
  return undefined;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const short = (hash: string | undefined) => (hash ? `${hash.slice(0, 12)}…` : 'none');
/** "attempt #3" or, with several requests, "attempt #3 (request 2)". */
const name = (a: Attempt, several: boolean) => `attempt #${a.n}${several ? ` (request ${a.request})` : ''}`;
const answer = (a: Attempt) => (a.status === 0 ? 'no response' : `a ${a.status}`);

/** Attempts started per whole second of the run: how the client's request rate moved. */
export function perSecond(attempts: readonly Attempt[]): number[] {
  const counts: number[] = [];
  for (const a of attempts) {
    const s = Math.floor(a.start / 1000);
    while (counts.length <= s) counts.push(0);
    counts[s]!++;
  }
  return counts;
}

function checkAttempts(scenario: Scenario, groups: Attempt[][], out: Finding[]): void {
  const want = scenario.expect.attempts;
  if (!want) return;
  const several = groups.length > 1;
  for (const group of groups) {
    const n = group.length;
    const of = several ? ` for request ${group[0]!.request}` : '';
    const statuses = group.map((a) => a.status).join(', ');
    if (want.min !== undefined && n < want.min) {
      out.push({
        check: 'attempts',
        expected: `at least ${plural(want.min, 'attempt')} (it retries)`,
        actual: `${plural(n, 'attempt')}${of} (status ${statuses})`,
      });
    }
    if (want.max !== undefined && n > want.max) {
      const expected =
        want.max === 1 ? '1 attempt (never retried)' : `at most ${plural(want.max, 'attempt')} (it gives up)`;
      out.push({ check: 'attempts', expected, actual: `${plural(n, 'attempt')}${of} (status ${statuses})` });
    }
  }
}

function checkRetryAfter(scenario: Scenario, groups: Attempt[][], out: Finding[]): void {
  const want = scenario.expect.retryAfter;
  if (!want) return;
  const several = groups.length > 1;
  for (const group of groups) {
    for (let i = 1; i < group.length; i++) {
      const [before, after] = [group[i - 1]!, group[i]!];
      if (before.retryAfterMs === undefined || after.gapMs! >= before.retryAfterMs - want.toleranceMs) continue;
      out.push({
        check: 'retry-after',
        expected: `${name(after, several)} no sooner than ${before.retryAfterMs} ms after ${answer(before)} asked for that wait (retry-after-ms: ${before.retryAfterMs})`,
        actual: `it started ${after.gapMs} ms after (at ${after.start} ms; the ${before.status} ended at ${before.end} ms)`,
      });
    }
  }
}

function checkBackoff(scenario: Scenario, groups: Attempt[][], out: Finding[]): void {
  const want = scenario.expect.backoff;
  if (!want) return;
  for (const group of groups) {
    const gaps = group.slice(1).map((a) => a.gapMs!);
    const shown = `gaps ${gaps.map((g) => `${g} ms`).join(', ')}`;
    if (gaps.length && gaps[0]! < want.minFirstGapMs) {
      out.push({
        check: 'backoff',
        expected: `a first retry at least ${want.minFirstGapMs} ms after the failure`,
        actual: `${shown} (the first retry came ${gaps[0]} ms after)`,
      });
    }
    for (let i = 1; i < gaps.length; i++) {
      const floor = Math.ceil(gaps[i - 1]! * want.growth);
      if (gaps[i]! >= floor) continue;
      out.push({
        check: 'backoff',
        expected: `growing gaps: gap ${i + 1} at least ${want.growth} × gap ${i} = ${floor} ms`,
        actual: `${shown} (gap ${i + 1} did not grow)`,
      });
    }
  }
}

function checkSameBody(scenario: Scenario, groups: Attempt[][], out: Finding[]): void {
  if (!scenario.expect.sameBody) return;
  const several = groups.length > 1;
  for (const group of groups) {
    const first = group.find((a) => a.bodyHash !== undefined);
    for (const a of group) {
      if (!first || a.bodyHash === undefined || a.bodyHash === first.bodyHash) continue;
      out.push({
        check: 'same-body',
        expected: `every attempt sends the body of ${name(first, several)} (sha256 ${short(first.bodyHash)})`,
        actual: `${name(a, several)} sent another body (sha256 ${short(a.bodyHash)})`,
      });
    }
  }
}

function checkTimeout(
  scenario: Scenario,
  attempts: readonly Attempt[],
  several: boolean,
  options: GradeOptions,
  out: Finding[],
): void {
  const want = scenario.expect.timeout;
  const limit = options.clientTimeoutMs;
  if (!want || limit === undefined) return;
  const held = scenario.mock.hold?.what === 'first-token' ? 'first token' : 'answer';
  for (const a of attempts) {
    const took = a.end - a.start;
    const expected = `the client gives up on ${name(a, several)} within its timeout, ${limit} ms (+${want.toleranceMs} ms), and closes the connection`;
    if (a.stream !== 'aborted') {
      const got =
        a.stream === 'completed' || (a.status !== 0 && a.stream === undefined)
          ? `waited ${took} ms for the held ${held} and read the answer to its end`
          : `ended after ${took} ms with status ${a.status}${a.stream ? `, stream ${a.stream}` : ''}`;
      out.push({ check: 'timeout', expected, actual: `it ${got}` });
    } else if (took > limit + want.toleranceMs) {
      out.push({ check: 'timeout', expected, actual: `it left after ${took} ms` });
    }
  }
}

function checkRate(scenario: Scenario, attempts: readonly Attempt[], out: Finding[]): void {
  const want = scenario.expect.rate;
  if (!want) return;
  // One attempt per request it was asked to start, per window: each waits its turn instead of coming back at once.
  const requests = scenario.concurrency ?? 1;
  const busiest = busiestWindow(attempts, want.windowMs);
  if (busiest.count <= requests) return;
  out.push({
    check: 'rate',
    expected: `its request rate falls to the service's pace: at most ${requests} attempts (one per request it started, MOCK_CONCURRENCY) in any ${want.windowMs} ms`,
    actual: `${busiest.count} attempts in the ${want.windowMs} ms from ${busiest.from} ms; attempts per second: ${perSecond(attempts).join(', ')}`,
  });
}

function checkExit(scenario: Scenario, outcome: ClientOutcome, out: Finding[]): void {
  const want = scenario.expect.exit;
  if (!want || outcome.stopped) return;
  const code = outcome.exitCode;
  const ended =
    outcome.error !== undefined
      ? `it threw: ${outcome.error}`
      : code === null
        ? `it was ended by ${outcome.signal ?? 'a signal'}`
        : `exit ${code}`;
  if (want === 'success' && code !== 0)
    out.push({ check: 'exit', expected: 'success (exit 0): the request went through in the end', actual: ended });
  if (want === 'failure' && code === 0)
    out.push({
      check: 'exit',
      expected: 'an error (a non-zero exit): the client reports that the request failed',
      actual: 'exit 0: it reported success',
    });
}

function checkStopped(
  scenario: Scenario,
  outcome: ClientOutcome,
  attempts: readonly Attempt[],
  options: GradeOptions,
  out: Finding[],
): void {
  if (outcome.stopped === 'deadline') {
    out.push({
      check: 'finished',
      expected: `the client finishes within ${options.deadlineMs ?? 'the deadline'} ms`,
      actual: `it was still running after ${outcome.ms} ms (${plural(attempts.length, 'attempt')}) and was stopped`,
    });
  } else if (outcome.stopped === 'attempts' && !scenario.expect.attempts?.max) {
    out.push({
      check: 'finished',
      expected: 'the client gives up',
      actual: `it was still retrying after ${plural(attempts.length, 'attempt')} and was stopped`,
    });
  }
}

/** Keeps the first few findings of each check, and says how many more there were. */
function capped(findings: readonly Finding[]): Finding[] {
  const kept: Finding[] = [];
  const dropped = new Map<string, number>();
  for (const f of findings) {
    if (kept.filter((k) => k.check === f.check).length < MAX_PER_CHECK) kept.push(f);
    else dropped.set(f.check, (dropped.get(f.check) ?? 0) + 1);
  }
  for (const [check, n] of dropped) kept.push({ check, expected: '(as above)', actual: `and ${n} more like it` });
  return kept;
}

/**
 * Grades a client's run of a scenario from the journal of the scenario's mock and the client's outcome.
 * Every time it judges comes from the journal's timestamps, none from a clock of its own.
 */
export function grade(
  scenario: Scenario,
  entries: readonly JournalEntry[],
  outcome: ClientOutcome,
  options: GradeOptions & Burst,
): Grade {
  const attempts = attemptsOf(entries, scenario.operation ?? DEFAULT_OPERATION);
  const groups = byRequest(attempts);
  const base = { scenario: scenario.id, attempts, requests: groups.length, outcome };
  const before = notApplicableBefore(scenario, options);
  if (before) return { ...base, verdict: 'not-applicable', reason: before, failures: [] };
  if (!attempts.length) {
    const reason = outcome.stopped
      ? `the client sent no request in ${outcome.ms} ms and was stopped`
      : 'the client sent no request to the mock: point it at OPENAI_BASE_URL with OPENAI_API_KEY (checkClient: the env it is given)';
    return {
      ...base,
      verdict: 'fail',
      reason,
      failures: [{ check: 'attempts', expected: 'at least one request to the mock', actual: reason }],
    };
  }
  const needs = scenario.needs ?? [];
  if (needs.includes('stream') && !attempts.some((a) => a.stream !== undefined)) {
    return {
      ...base,
      verdict: 'not-applicable',
      reason: 'the client never streamed an answer (stream: true)',
      failures: [],
    };
  }
  // The journal shows how long the mock took over each attempt, not how long the client waited for it, so
  // requests made together show as attempts that start together.
  if (needs.includes('concurrency') && openingBurst(attempts, options.burstMs) < 2) {
    const asked = scenario.concurrency ?? 1;
    return {
      ...base,
      verdict: 'not-applicable',
      reason: `the client never started two requests together (it was asked for MOCK_CONCURRENCY=${asked} at once)`,
      failures: [],
    };
  }
  const findings: Finding[] = [];
  checkStopped(scenario, outcome, attempts, options, findings);
  checkAttempts(scenario, groups, findings);
  checkRetryAfter(scenario, groups, findings);
  checkBackoff(scenario, groups, findings);
  checkSameBody(scenario, groups, findings);
  checkTimeout(scenario, attempts, groups.length > 1, options, findings);
  checkRate(scenario, attempts, findings);
  checkExit(scenario, outcome, findings);
  const failures = capped(findings);
  if (!failures.length) return { ...base, verdict: 'pass', failures };
  return { ...base, verdict: 'fail', reason: `${failures[0]!.expected}; ${failures[0]!.actual}`, failures };
}
