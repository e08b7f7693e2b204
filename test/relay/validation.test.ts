// The validating proxy's judgement of one exchange, and its report: the request's own departure, the
// response judged by the conformance runner's checks for the case the request makes (a busy upstream is
// not judged), the x-mock-violations header, and the JSON and JUnit reports with their counts, secrets scrubbed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError, ERRORS } from '../../src/contract/errors.js';
import { operation } from '../../src/contract/operations.js';
import type { Violation } from '../../src/domain/journal/journal.js';
import { loadLimits } from '../../src/domain/limits.js';
import {
  requestViolations,
  responseViolations,
  ViolationLog,
  violationsHeader,
  type Judged,
} from '../../src/relay/validation.js';
import { exchangeOf, get, schemas, withMock } from '../support/index.js';

const ME = operation('me');
const CHAT = operation('chat.completions');
const refusal = new ApiError(ERRORS.VALIDATION, { message: "'messages' is required", param: 'messages' });

const judged = (over: Partial<Judged> = {}): Judged => ({
  requestId: 'req_1',
  op: ME,
  method: 'GET',
  path: '/v1/me',
  body: undefined,
  refusal: undefined,
  ...over,
});
const rules = (vs: readonly Violation[]): string[] => vs.map((v) => v.rule);

test('a request the schema accepts has no violation of its own; one it refuses has request.schema', () => {
  assert.equal(requestViolations(judged()), []);
  assert.equal(requestViolations(judged({ op: CHAT, method: 'POST', refusal })), [
    {
      rule: 'request.schema',
      expected: 'a body matching the chat.completions request schema',
      actual: "'messages' is required",
    },
  ]);
});

test('documented profile: the status is judged against the case the request makes', async () => {
  assert.equal(await responseViolations(judged(), exchangeOf({ status: 200, json: {} }), 'documented', schemas()), []);
  const wrong = await responseViolations(judged(), exchangeOf({ status: 404, json: {} }), 'documented', schemas());
  assert.equal(rules(wrong), ['response.status']);
  assert.match(wrong[0]!.expected, '200');
  assert.match(wrong[0]!.actual, '404');
  // A refused body must be answered with the refusal's status.
  const bad = judged({
    op: CHAT,
    method: 'POST',
    path: '/text-provider/chat/completions',
    body: { model: 'gpt-4o' },
    refusal,
  });
  assert.equal(await responseViolations(bad, exchangeOf({ status: 400, json: {} }), 'documented', schemas()), []);
  assert.equal(rules(await responseViolations(bad, exchangeOf({ status: 200, json: {} }), 'documented', schemas())), [
    'response.status',
  ]);
});

test('a busy or failing upstream (429, 5xx) on a valid request is not judged; on a refused one it is', async () => {
  for (const status of [429, 500, 502, 503])
    assert.equal(
      await responseViolations(judged(), exchangeOf({ status, json: {} }), 'full', schemas()),
      [],
      String(status),
    );
  const bad = judged({ op: CHAT, method: 'POST', body: {}, refusal });
  assert.equal(rules(await responseViolations(bad, exchangeOf({ status: 503, json: {} }), 'documented', schemas())), [
    'response.status',
  ]);
});

test("a 400 to a body the mock would refuse by a rule of its own is that refusal's status, not a departure", async () => {
  const unsettled = new ApiError(ERRORS.MODEL_NOT_FOUND, { message: 'The model does not exist', param: 'model' });
  const j = judged({ op: CHAT, method: 'POST', body: { model: 'nope', messages: [] }, unsettled });
  assert.equal(await responseViolations(j, exchangeOf({ status: 400, json: {} }), 'documented', schemas()), []);
  assert.equal(
    rules(
      await responseViolations(
        judged({ op: CHAT, method: 'POST', body: {} }),
        exchangeOf({ status: 400, json: {} }),
        'documented',
        schemas(),
      ),
    ),
    ['response.status'],
  );
});

test("full profile: the success body and headers are judged by the runner's checks; the mock's own answer passes", async () => {
  const found = rules(
    await responseViolations(judged(), exchangeOf({ json: { not: 'a me body' } }), 'full', schemas()),
  );
  assert.ok(found.includes('response.success-schema'), found.join());
  assert.ok(found.includes('response.request-id'), found.join());
  await withMock({}, async ({ url }) => {
    const res = await get(url, '/v1/me');
    const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, String(v)]));
    assert.equal(
      await responseViolations(judged(), { status: res.status, headers, body: res.bytes, ms: 1 }, 'full', schemas()),
      [],
    );
  });
});

test('the header names how many, and the first rule', () => {
  const v = (rule: string): Violation => ({ rule, expected: 'e', actual: 'a' });
  assert.is(violationsHeader([v('response.status')]), '1; response.status');
  assert.is(violationsHeader([v('response.sse'), v('request.schema')]), '2; response.sse');
});

test('the log counts every exchange, keeps those with violations, and writes both reports with secrets scrubbed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'uam-violations-'));
  try {
    const bounds = loadLimits().proxyReport;
    const log = new ViolationLog(
      'http://upstream',
      'documented',
      (text) => text.replaceAll('sk-secret', '[masked]'),
      bounds,
    );
    const broken: Violation = { rule: 'response.status', expected: 'status 200', actual: 'status 404 for sk-secret' };
    log.add(judged(), 200, [], 3);
    log.add(judged({ requestId: 'req_2' }), 404, [broken], 4);
    const long = 'x'.repeat(bounds.maxBodyChars + 1000);
    log.add(judged({ requestId: 'req_3', op: CHAT, method: 'POST', body: { prompt: long } }), 404, [broken], 5);
    assert.equal(log.counts, { exchanges: 3, withViolations: 2, clientMistakes: 0 });
    const report = log.report();
    assert.is(report.summary.total, 3);
    assert.is(report.summary.failed, 2);
    assert.is(report.summary.passed, 1);
    assert.equal(
      report.results.map((r) => [r.case.id, r.verdict, r.status, r.failures.map((f) => f.check)]),
      [
        ['req_2', 'fail', 404, ['response.status']],
        ['req_3', 'fail', 404, ['response.status']],
      ],
    );
    const kept = String(report.results[1]!.request!.body);
    assert.match(kept, /x{100}\.\.\.$/);
    assert.ok(kept.length <= bounds.maxBodyChars + 3, 'a long body is cut at proxyReport.maxBodyChars');

    const file = join(dir, 'nested', 'violations.json');
    assert.equal(await log.write(file), [file, join(dir, 'nested', 'violations.xml')]);
    const json = readFileSync(file, 'utf8');
    const xml = readFileSync(join(dir, 'nested', 'violations.xml'), 'utf8');
    for (const text of [json, xml]) {
      assert.not.match(text, 'sk-secret');
      assert.match(text, '[masked]');
    }
    assert.is(JSON.parse(json).summary.total, 3);
    assert.match(xml, /^<\?xml/);
    // Named .xml, the JUnit report takes that name and the JSON goes beside it.
    const xmlFirst = join(dir, 'report.xml');
    assert.equal(await log.write(xmlFirst), [xmlFirst, join(dir, 'report.json')]);
    assert.match(readFileSync(xmlFirst, 'utf8'), /^<\?xml/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the client's mistake is a warning, not a failure: an invalid request the upstream refused as it should", () => {
  const log = new ViolationLog('http://upstream', 'documented', (t) => t, loadLimits().proxyReport);
  const mistake: Violation = { rule: 'request.schema', expected: 'a body matching', actual: "'messages' is required" };
  const departure: Violation = { rule: 'response.status', expected: 'status 400', actual: 'status 200' };
  // 400 expected, 400 got: the client's request alone is wrong.
  log.add(judged({ requestId: 'req_client', op: CHAT, method: 'POST', refusal }), 400, [mistake], 1);
  // 400 expected, 200 got: the upstream accepted what it must refuse.
  log.add(judged({ requestId: 'req_upstream', op: CHAT, method: 'POST', refusal }), 200, [departure, mistake], 1);
  assert.equal(log.counts, { exchanges: 2, withViolations: 2, clientMistakes: 1 });
  const report = log.report();
  assert.equal(
    [report.summary.total, report.summary.passed, report.summary.failed, report.summary.warnings],
    [2, 0, 1, 1],
  );
  assert.equal(
    report.results.map((r) => [r.case.id, r.verdict, r.case.level]),
    [
      ['req_client', 'warn', 'should'],
      ['req_upstream', 'fail', 'must'],
    ],
  );
});

test.run();
