// The grader alone: journals written by hand (no socket, no clock), each check passed and failed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { JournalEntry } from '../../../src/domain/journal/journal.js';
import { attemptsOf, busiestWindow, byRequest, openingBurst } from '../../../src/tools/clientCheck/attempts.js';
import {
  grade as gradeWith,
  perSecond,
  type ClientOutcome,
  type GradeOptions,
} from '../../../src/tools/clientCheck/grade.js';
import { packageLimits } from '../../../src/domain/limits.js';
import type { Scenario } from '../../../src/tools/clientCheck/scenarios.js';

// Graded with the package's limits (clientCheck.burstMs) unless a test says otherwise.
const grade = (s: Scenario, e: readonly JournalEntry[], o: ClientOutcome, options: GradeOptions = {}) =>
  gradeWith(s, e, o, { ...options, burstMs: packageLimits().clientCheck.burstMs });

const T0 = 1_800_000_000_000;

/** An attempt that started `at` ms into the run and took `ms`. */
function entry(at: number, ms: number, extra: Partial<JournalEntry> = {}): JournalEntry {
  return {
    requestId: `req_${at}`,
    time: T0 + at + ms,
    method: 'POST',
    path: '/text-provider/chat/completions',
    operation: 'chat.completions',
    keyLabel: 'sk...ck',
    status: 200,
    latencyMs: ms,
    errorCode: undefined,
    details: undefined,
    fault: undefined,
    stream: undefined,
    retryCount: undefined,
    model: 'gpt-4o-mini',
    bodyHash: 'aa'.repeat(32),
    ...extra,
  };
}

const scenario = (expect: Scenario['expect'], more: Partial<Scenario> = {}): Scenario => ({
  id: 'test',
  title: 'test',
  why: 'why',
  good: 'good',
  mock: {},
  expect,
  ...more,
});
const exited = (exitCode: number | null, more: Partial<ClientOutcome> = {}): ClientOutcome => ({
  exitCode,
  ms: 1000,
  ...more,
});

test('attempts: start = time - latency, in start order, gaps from the end of the previous attempt, other operations left out', () => {
  const entries = [
    entry(1500, 10, { status: 200 }),
    entry(0, 5, { status: 429, retryAfterMs: 1000 }),
    entry(200, 3, { operation: 'me' }),
  ];
  const attempts = attemptsOf(entries, 'chat.completions');
  assert.equal(
    attempts.map((a) => [a.n, a.start, a.end, a.status, a.gapMs, a.request]),
    [
      [1, 0, 5, 429, undefined, 1],
      [2, 1500, 1510, 200, 1495, 1],
    ],
  );
  assert.equal(attemptsOf([], 'chat.completions'), []);
});

test('attempts: with x-stainless-retry-count, retries join the request they continue, the same body first', () => {
  const a = 'a'.repeat(64);
  const b = 'b'.repeat(64);
  const entries = [
    entry(0, 5, { retryCount: 0, bodyHash: a, status: 500 }),
    entry(1, 5, { retryCount: 0, bodyHash: b, status: 500 }),
    entry(400, 5, { retryCount: 1, bodyHash: b }),
    entry(401, 5, { retryCount: 1, bodyHash: a }),
    entry(900, 5, { retryCount: 0, bodyHash: a }),
  ];
  const attempts = attemptsOf(entries, 'chat.completions');
  assert.equal(
    attempts.map((x) => x.request),
    [1, 2, 2, 1, 3],
  );
  assert.equal(
    byRequest(attempts).map((g) => g.map((x) => x.n)),
    [[1, 4], [2, 3], [5]],
  );
  // A retry whose request is unknown (its attempt 0 is not in the journal) starts a request of its own.
  assert.equal(
    attemptsOf([entry(0, 1, { retryCount: 2 }), entry(5, 1, { retryCount: 0 })], 'chat.completions').map(
      (x) => x.request,
    ),
    [1, 2],
  );
  // A client whose count never goes past 0 does not number its retries: the run is one request.
  assert.equal(
    attemptsOf([entry(0, 1, { retryCount: 0 }), entry(1000, 1, { retryCount: 0 })], 'chat.completions').map(
      (x) => x.request,
    ),
    [1, 1],
  );
});

test('attempts: the opening burst, the busiest window and the rate per second', () => {
  const attempts = attemptsOf(
    [0, 1, 2, 150, 1000, 1001, 2500].map((at) => entry(at, 1)),
    'chat.completions',
  );
  assert.is(openingBurst(attempts, 100), 3);
  assert.equal(busiestWindow(attempts, 900), { from: 0, count: 4 });
  assert.equal(busiestWindow(attempts, 100), { from: 0, count: 3 });
  assert.equal(busiestWindow([], 100), { from: 0, count: 0 });
  assert.equal(perSecond(attempts), [4, 2, 1]);
});

test('attempts: min and max per request', () => {
  const s = scenario({ attempts: { min: 2, max: 3 } });
  assert.is(grade(s, [entry(0, 1), entry(500, 1)], exited(0)).verdict, 'pass');
  const once = grade(s, [entry(0, 1, { status: 503 })], exited(1));
  assert.is(once.verdict, 'fail');
  assert.equal(once.failures, [
    { check: 'attempts', expected: 'at least 2 attempts (it retries)', actual: '1 attempt (status 503)' },
  ]);
  const many = grade(
    s,
    [0, 10, 20, 30].map((at) => entry(at, 1, { status: 400 })),
    exited(1),
  );
  assert.equal(many.failures, [
    {
      check: 'attempts',
      expected: 'at most 3 attempts (it gives up)',
      actual: '4 attempts (status 400, 400, 400, 400)',
    },
  ]);
  assert.match(many.reason!, /^at most 3 attempts \(it gives up\); 4 attempts/);
  const never = grade(
    scenario({ attempts: { max: 1 } }),
    [entry(0, 1, { status: 400 }), entry(5, 1, { status: 400 })],
    exited(1),
  );
  assert.is(never.failures[0]!.expected, '1 attempt (never retried)');
});

test('retry-after: a retry must not start before the hint of the answer before it', () => {
  const s = scenario({ retryAfter: { toleranceMs: 50 } });
  const waited = [
    entry(0, 2, { status: 429, retryAfterMs: 1000 }),
    entry(1000, 2, { status: 429, retryAfterMs: 1000 }),
    entry(2000, 2),
  ];
  assert.is(grade(s, waited, exited(0)).verdict, 'pass');
  const hurried = grade(s, [entry(0, 2, { status: 429, retryAfterMs: 1000 }), entry(300, 2)], exited(0));
  assert.is(hurried.verdict, 'fail');
  assert.equal(hurried.failures, [
    {
      check: 'retry-after',
      expected: 'attempt #2 no sooner than 1000 ms after a 429 asked for that wait (retry-after-ms: 1000)',
      actual: 'it started 298 ms after (at 300 ms; the 429 ended at 2 ms)',
    },
  ]);
  // Within the tolerance; and answers without a hint ask for no wait.
  assert.is(grade(s, [entry(0, 2, { status: 429, retryAfterMs: 1000 }), entry(960, 2)], exited(0)).verdict, 'pass');
  assert.is(grade(s, [entry(0, 2, { status: 500 }), entry(3, 2)], exited(0)).verdict, 'pass');
});

test('backoff: a first gap long enough, then gaps that grow', () => {
  const s = scenario({ backoff: { minFirstGapMs: 100, growth: 1.2 } });
  const grows = [entry(0, 1, { status: 503 }), entry(451, 1, { status: 500 }), entry(1352, 1, { status: 500 })];
  assert.is(grade(s, grows, exited(1)).verdict, 'pass');
  const fixed = grade(s, [entry(0, 1), entry(201, 1), entry(402, 1)], exited(1));
  assert.equal(fixed.failures, [
    {
      check: 'backoff',
      expected: 'growing gaps: gap 2 at least 1.2 × gap 1 = 240 ms',
      actual: 'gaps 200 ms, 200 ms (gap 2 did not grow)',
    },
  ]);
  const hasty = grade(s, [entry(0, 1), entry(3, 1)], exited(1));
  assert.equal(hasty.failures, [
    {
      check: 'backoff',
      expected: 'a first retry at least 100 ms after the failure',
      actual: 'gaps 2 ms (the first retry came 2 ms after)',
    },
  ]);
  assert.is(grade(s, [entry(0, 1)], exited(1)).verdict, 'pass', 'no retry, no gap to judge');
});

test('same body: every attempt of a request sends the first attempt body; attempts with no body read are skipped', () => {
  const s = scenario({ sameBody: true });
  const a = 'a'.repeat(64);
  const b = 'b'.repeat(64);
  assert.is(
    grade(
      s,
      [entry(0, 1, { bodyHash: a }), entry(100, 1, { bodyHash: undefined }), entry(200, 1, { bodyHash: a })],
      exited(0),
    ).verdict,
    'pass',
  );
  const changed = grade(s, [entry(0, 1, { bodyHash: a, status: 500 }), entry(100, 1, { bodyHash: b })], exited(0));
  assert.equal(changed.failures, [
    {
      check: 'same-body',
      expected: 'every attempt sends the body of attempt #1 (sha256 aaaaaaaaaaaa…)',
      actual: 'attempt #2 sent another body (sha256 bbbbbbbbbbbb…)',
    },
  ]);
});

test('timeout: every attempt aborted by the client within its declared timeout', () => {
  const s = scenario(
    { timeout: { toleranceMs: 500 } },
    { needs: ['client-timeout'], mock: { hold: { what: 'first-token', pastClientTimeoutMs: 3000 } } },
  );
  const options = { clientTimeoutMs: 1000 };
  assert.is(
    grade(s, [entry(0, 990, { stream: 'aborted' }), entry(1500, 1001, { stream: 'aborted' })], exited(1), options)
      .verdict,
    'pass',
  );
  const waited = grade(s, [entry(0, 4003, { stream: 'completed' })], exited(0), options);
  assert.equal(waited.failures[0], {
    check: 'timeout',
    expected: 'the client gives up on attempt #1 within its timeout, 1000 ms (+500 ms), and closes the connection',
    actual: 'it waited 4003 ms for the held first token and read the answer to its end',
  });
  const late = grade(s, [entry(0, 2500, { stream: 'aborted' })], exited(1), options);
  assert.is(late.failures[0]!.actual, 'it left after 2500 ms');
  const answer = scenario(
    { timeout: { toleranceMs: 500 } },
    { needs: ['client-timeout'], mock: { hold: { what: 'answer', pastClientTimeoutMs: 3000 } } },
  );
  assert.is(
    grade(answer, [entry(0, 4001, { status: 200 })], exited(0), options).failures[0]!.actual,
    'it waited 4001 ms for the held answer and read the answer to its end',
  );
  assert.is(
    grade(answer, [entry(0, 10, { status: 0 })], exited(1), options).failures[0]!.actual,
    'it ended after 10 ms with status 0',
  );
  // Without a declared timeout the scenario cannot apply.
  const none = grade(s, [entry(0, 4003, { stream: 'completed' })], exited(0));
  assert.is(none.verdict, 'not-applicable');
  assert.match(none.reason!, /--client-timeout MS/);
});

test('rate: at most one attempt per request asked for, in any window; otherwise the rate per second shows the herd', () => {
  const s = scenario({ rate: { windowMs: 900 } }, { concurrency: 4, needs: ['concurrency'] });
  const calm = [0, 1, 2, 3, 1000, 1001, 2000].map((at) => entry(at, 1));
  assert.is(grade(s, calm, exited(0)).verdict, 'pass');
  const herd = grade(
    s,
    [0, 1, 2, 3, 5, 6, 7, 9, 11, 1200].map((at) => entry(at, 1)),
    exited(1),
  );
  assert.equal(herd.failures, [
    {
      check: 'rate',
      expected:
        "its request rate falls to the service's pace: at most 4 attempts (one per request it started, MOCK_CONCURRENCY) in any 900 ms",
      actual: '9 attempts in the 900 ms from 0 ms; attempts per second: 9, 1',
    },
  ]);
  const alone = grade(s, [entry(0, 1), entry(500, 1)], exited(0));
  assert.is(alone.verdict, 'not-applicable');
  assert.match(alone.reason!, /never started two requests together \(it was asked for MOCK_CONCURRENCY=4 at once\)/);
});

test('exit: success or an error, as the scenario asks; a stopped client is judged by what it did, not its exit', () => {
  const ok = scenario({ exit: 'success' });
  const err = scenario({ exit: 'failure' });
  assert.is(grade(ok, [entry(0, 1)], exited(0)).verdict, 'pass');
  assert.equal(grade(ok, [entry(0, 1)], exited(3)).failures, [
    { check: 'exit', expected: 'success (exit 0): the request went through in the end', actual: 'exit 3' },
  ]);
  assert.is(grade(ok, [entry(0, 1)], exited(1, { error: 'Error: boom' })).failures[0]!.actual, 'it threw: Error: boom');
  assert.is(
    grade(ok, [entry(0, 1)], exited(null, { signal: 'SIGSEGV' })).failures[0]!.actual,
    'it was ended by SIGSEGV',
  );
  assert.is(grade(err, [entry(0, 1)], exited(null, { signal: 'SIGSEGV' })).verdict, 'pass');
  assert.equal(grade(err, [entry(0, 1)], exited(0)).failures, [
    {
      check: 'exit',
      expected: 'an error (a non-zero exit): the client reports that the request failed',
      actual: 'exit 0: it reported success',
    },
  ]);
  const stopped = grade(err, [entry(0, 1)], exited(null, { stopped: 'deadline', ms: 20_000 }), { deadlineMs: 20_000 });
  assert.equal(stopped.failures, [
    {
      check: 'finished',
      expected: 'the client finishes within 20000 ms',
      actual: 'it was still running after 20000 ms (1 attempt) and was stopped',
    },
  ]);
  const looping = grade(err, [entry(0, 1), entry(2, 1)], exited(null, { stopped: 'attempts' }));
  assert.equal(looping.failures, [
    {
      check: 'finished',
      expected: 'the client gives up',
      actual: 'it was still retrying after 2 attempts and was stopped',
    },
  ]);
});

test('not applicable: a stream scenario for a client that never streamed; no request at all is a failure', () => {
  const s = scenario({ exit: 'failure' }, { needs: ['stream'] });
  const plain = grade(s, [entry(0, 1)], exited(0));
  assert.is(plain.verdict, 'not-applicable');
  assert.is(plain.reason, 'the client never streamed an answer (stream: true)');
  assert.is(grade(s, [entry(0, 1, { stream: 'cut' })], exited(1)).verdict, 'pass');
  const silent = grade(s, [], exited(0));
  assert.is(silent.verdict, 'fail');
  assert.match(silent.reason!, /sent no request to the mock/);
  assert.match(
    grade(s, [], exited(null, { stopped: 'deadline', ms: 20_000 })).reason!,
    /no request in 20000 ms and was stopped/,
  );
});

test('many findings of one check are cut to three and counted', () => {
  const s = scenario({ retryAfter: { toleranceMs: 0 } });
  const entries = [0, 10, 20, 30, 40, 50].map((at) => entry(at, 1, { status: 429, retryAfterMs: 1000 }));
  const g = grade(s, entries, exited(1));
  assert.is(g.failures.length, 4);
  assert.equal(g.failures[3], { check: 'retry-after', expected: '(as above)', actual: 'and 2 more like it' });
});

test.run();
