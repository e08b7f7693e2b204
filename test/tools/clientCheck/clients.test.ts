// The proof that a grade means what it says. The official openai SDK (retries 408/409/429/5xx and
// connection errors twice, backoff 0.5 s then 1 s with jitter, honours retry-after-ms and
// x-should-retry, never retries a started stream) passes every scenario, and each grade matches that
// policy; a naive fetch client fails exactly the scenarios it breaks. Both run as `client-check` runs
// a user's command: a separate process, told the mock's address by the environment.
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startMockServer, type MockServer } from '../../../src/server/programmatic.js';
import { clientCheck } from '../../../src/tools/clientCheck/cli.js';
import { loadScenarios } from '../../../src/tools/clientCheck/scenarios.js';
import { SchemaRegistry } from '../../../src/contract/schemas.js';

const SDK = fileURLToPath(new URL('clients/openai-sdk.mjs', import.meta.url));
const NAIVE = fileURLToPath(new URL('clients/naive-fetch.mjs', import.meta.url));
const SCENARIOS = loadScenarios(SchemaRegistry.shared());
const ALL = SCENARIOS.map((s) => s.id);
const TIMEOUT = SCENARIOS.filter((s) => s.tags?.includes('timeout')).map((s) => s.id);

interface JsonScenario {
  id: string;
  verdict: string;
  reason?: string;
  failures: { check: string; expected: string; actual: string }[];
  requests: number;
  attempts: {
    status: number;
    retryCount?: number;
    stream?: string;
    bodyHash?: string;
    gapMs?: number;
    retryAfterMs?: number;
  }[];
  client?: { exitCode: number | null };
}

/**
 * Runs client-check on a client script with the JSON reporter; resolves to the exit code and the scenarios by id.
 * A short client timeout (1 s or less) is given only where a scenario needs one: under a loaded machine it
 * could expire on an answer that took long to arrive, and look like a retry the client chose to make.
 */
async function check(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; byId: Map<string, JsonScenario>; text: string }> {
  let stdout = '';
  let stderr = '';
  const code = await clientCheck(
    [...args, '--reporter', 'json', '--', process.execPath, script],
    { startMock: (config) => startMockServer(config) },
    {
      stdout: (t) => void (stdout += t),
      stderr: (t) => void (stderr += t),
      env: { ...process.env, NO_COLOR: '1', ...env },
    },
  );
  assert.is(stderr, '');
  const report = JSON.parse(stdout) as { scenarios: JsonScenario[] };
  return { code, byId: new Map(report.scenarios.map((s) => [s.id, s])), text: stdout };
}

const failed = (byId: Map<string, JsonScenario>) =>
  Object.fromEntries(
    [...byId.values()]
      .filter((s) => s.verdict === 'fail')
      .map((s) => [s.id, [...new Set(s.failures.map((f) => f.check))]]),
  );
const statuses = (s: JsonScenario | undefined) => s!.attempts.map((a) => a.status);

const sdk = suite('client-check: the official openai SDK');

/** Every scenario for a client: the timeout ones with a short declared timeout, the others with a long one. */
async function checkAll(script: string, timeoutMs: string) {
  const others = ALL.filter((id) => !TIMEOUT.includes(id)).join(',');
  const a = await check(script, ['--scenario', others], { CLIENT_TIMEOUT_MS: '10000' });
  const b = await check(script, ['--scenario', 'timeout', '--client-timeout', timeoutMs], {
    CLIENT_TIMEOUT_MS: timeoutMs,
  });
  const byId = new Map([...a.byId, ...b.byId].sort(([x], [y]) => ALL.indexOf(x) - ALL.indexOf(y)));
  return { codes: [a.code, b.code], byId, text: a.text + b.text };
}

sdk('passes every scenario, each grade as its documented policy says', async () => {
  const { codes, byId, text } = await checkAll(SDK, '1000');
  assert.equal(failed(byId), {}, text);
  assert.equal([...byId.keys()], ALL);
  for (const s of byId.values()) assert.is(s.verdict, 'pass', `${s.id}: ${s.reason}`);
  assert.equal(codes, [0, 0]);

  // maxRetries 2: three attempts, numbered by x-stainless-retry-count, each after the 1 s retry-after.
  const limited = byId.get('rate-limited-429')!;
  assert.equal(statuses(limited), [429, 429, 429]);
  assert.equal(
    limited.attempts.map((a) => a.retryCount),
    [0, 1, 2],
  );
  assert.equal(
    limited.attempts.map((a) => a.retryAfterMs),
    [1000, 1000, 1000],
  );
  // Its own backoff for 5xx (no hint); then it raises the error.
  assert.equal(statuses(byId.get('server-errors-backoff')), [503, 500, 500]);
  assert.is(byId.get('server-errors-backoff')!.client!.exitCode, 1);
  // 400, 401 and x-should-retry: false are raised at once.
  for (const id of ['bad-request-400', 'unauthorized-401', 'should-retry-false'])
    assert.is(byId.get(id)!.attempts.length, 1, id);
  // Connection errors are retried, and the second attempt succeeds.
  for (const id of ['connection-reset', 'empty-close']) assert.equal(statuses(byId.get(id)), [0, 200], id);
  const same = byId.get('same-body-on-retry')!;
  assert.equal(statuses(same), [500, 200]);
  assert.is(new Set(same.attempts.map((a) => a.bodyHash)).size, 1);
  // It streams every answer: a stream that has started is never retried, and a cut one is an error.
  assert.equal(
    byId.get('stream-cut')!.attempts.map((a) => a.stream),
    ['cut'],
  );
  assert.equal(
    byId.get('rate-limited-429')!.attempts.map((a) => a.stream),
    [undefined, undefined, undefined],
    'a 429 comes before the stream starts, so it is retried',
  );
  // A timeout before the headers is a connection timeout, retried twice; one in a started stream is not retried.
  assert.equal(
    byId.get('answer-timeout')!.attempts.map((a) => [a.status, a.stream]),
    [
      [0, 'aborted'],
      [0, 'aborted'],
      [0, 'aborted'],
    ],
  );
  assert.equal(
    byId.get('first-token-timeout')!.attempts.map((a) => a.stream),
    ['aborted'],
  );
  // Eight requests at once: each retries after the limiter's retry-after-ms, and all succeed.
  const storm = byId.get('rate-limit-storm')!;
  assert.is(storm.requests, 8);
  assert.is(storm.attempts.filter((a) => a.status === 200).length, 8);
  assert.is(storm.client!.exitCode, 0);
});

sdk("with only the SDK's `timeout`, a held first token is waited for: that timeout ends with the headers", async () => {
  const { code, byId } = await check(SDK, ['--client-timeout', '1000', '--scenario', 'first-token-timeout'], {
    CLIENT_TIMEOUT_MS: '1000',
    CLIENT_STREAM_TIMEOUT: 'sdk',
  });
  assert.is(code, 1);
  assert.equal(failed(byId), { 'first-token-timeout': ['timeout', 'exit'] });
  assert.match(
    byId.get('first-token-timeout')!.failures[0]!.actual,
    /^it waited \d+ ms for the held first token and read the answer to its end$/,
  );
});

sdk(
  'a client that never streams: the stream scenarios are not applicable; a timeout scenario without --client-timeout neither',
  async () => {
    const { code, byId } = await check(SDK, ['--scenario', 'stream'], { CLIENT_STREAM: 'never' });
    assert.is(code, 0);
    assert.equal(
      [...byId.values()].map((s) => [s.id, s.verdict, s.reason]),
      [
        [
          'first-token-timeout',
          'not-applicable',
          "needs the client's timeout: declare it with --client-timeout MS (checkClient: clientTimeoutMs)",
        ],
        ['stream-cut', 'not-applicable', 'the client never streamed an answer (stream: true)'],
      ],
    );
  },
);

sdk.run();

const naive = suite('client-check: a naive fetch client');

naive('fails exactly the scenarios it breaks, each for the reason it breaks it', async () => {
  const { codes, byId, text } = await checkAll(NAIVE, '500');
  assert.equal(codes, [1, 0]);
  assert.equal(
    failed(byId),
    {
      'bad-request-400': ['attempts'], // retries a 400
      'rate-limit-storm': ['rate'], // retries at once: a thundering herd
      'rate-limited-429': ['retry-after'], // ignores retry-after
      'server-errors-backoff': ['backoff'], // retries without backoff
      'should-retry-false': ['attempts'], // ignores x-should-retry
      'stream-cut': ['exit'], // takes a cut stream for a complete answer
      'unauthorized-401': ['attempts'], // retries a 401
    },
    text,
  );
  // What it does right: it retries connection errors, resends the same body, and keeps to its own timeout.
  for (const id of ['connection-reset', 'empty-close', 'same-body-on-retry', 'answer-timeout', 'first-token-timeout'])
    assert.is(byId.get(id)!.verdict, 'pass', id);
});

naive.run();

const programmatic = suite('mock.checkClient: the same grades for a test suite');
let mock: MockServer;
programmatic.before(async () => {
  mock = await startMockServer();
});
programmatic.after(() => mock.close());

programmatic('an in-process SDK client passes; the scenario variables are set only during the call', async () => {
  const before = process.env.OPENAI_BASE_URL;
  let seen: string | undefined;
  const grade = await mock.checkClient('same-body-on-retry', async () => {
    seen = process.env.MOCK_SCENARIO;
    const client = new OpenAI(); // OPENAI_BASE_URL and OPENAI_API_KEY point at the scenario's mock
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] });
  });
  assert.is(grade.verdict, 'pass', grade.reason);
  assert.equal(
    grade.attempts.map((a) => [a.status, a.retryCount]),
    [
      [500, 0],
      [200, 1],
    ],
  );
  assert.is(seen, 'same-body-on-retry');
  assert.is(process.env.OPENAI_BASE_URL, before);
  assert.is(mock.requests().length, 0, "the scenario ran on a mock of its own, not on this one's journal");
});

programmatic('a client that retries what it should not fails, with the reason and the timings', async () => {
  const grade = await mock.checkClient('should-retry-false', async ({ baseURL, apiKey }) => {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}',
      });
      if (res.ok) return;
    }
    throw new Error('gave up');
  });
  assert.is(grade.verdict, 'fail');
  assert.is(grade.outcome!.error, 'Error: gave up');
  assert.equal(grade.failures, [
    { check: 'attempts', expected: '1 attempt (never retried)', actual: '3 attempts (status 503, 503, 503)' },
  ]);
});

programmatic('a scenario given as an object is checked against the schema first', async () => {
  const grade = await mock.checkClient(
    {
      id: 'custom',
      title: 'one 502',
      why: 'why',
      good: 'good',
      mock: { faultRules: [{ fault: { status: 502 }, times: 1 }] },
      expect: { attempts: { min: 2 }, exit: 'success' },
    },
    async () => {
      await new OpenAI({ maxRetries: 1 }).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'ping' }],
      });
    },
  );
  assert.is(grade.verdict, 'pass', grade.reason);
  try {
    await mock.checkClient({ id: 'custom' } as never, () => {});
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.match((err as Error).message, /^checkClient scenario: not a valid client-check scenario/);
  }
  try {
    await mock.checkClient('no-such-scenario', () => {});
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.match((err as Error).message, /^no client-check scenario 'no-such-scenario'; there are: answer-timeout/);
  }
});

programmatic.run();
