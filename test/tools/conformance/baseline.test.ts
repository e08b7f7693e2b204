import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { start, type RunningMock } from '../../../src/server/server.js';
import { compareExchanges } from '../../../src/verdict/baseline.js';
import type { Exchange } from '../../../src/verdict/types.js';
import { closeSharedMock, runCli, sharedMock } from './harness.js';

const test = suite('conformance --baseline: where the target departs from another implementation');

const KEY = 'sk-mock-default';
const BASELINE_KEY = 'sk-baseline-only-key-4711';
const SCOPES = ['text', 'image', 'video', 'voice', 'speech'];
// The fault cases and GET /v1/me's: the fault cases are where a mock without fault headers answers otherwise.
const ONLY = ['--profile', 'full', '--only', 'fault,me'];

let noFaults: RunningMock | undefined;
let twin: RunningMock | undefined;
const dir = mkdtempSync(join(tmpdir(), 'baseline-'));

test.after(async () => {
  await closeSharedMock();
  await noFaults?.close();
  await twin?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Case {
  id: string;
  tags: string[];
  verdict: string;
  departures?: { check: string; what: string; target: string; baseline: string }[];
}

const run = async (baseline: string, extra: string[] = []) => {
  const { url } = await sharedMock();
  const out = await runCli(['--base-url', url, '--api-key', KEY, '--baseline', baseline, ...ONLY, ...extra]);
  const report = JSON.parse(out.stdout) as { baseline: { url: string; departedCases: number }; cases: Case[] };
  return { ...out, report };
};

test('the mock against another mock of the same configuration: no departures, exit 0', async () => {
  twin = await start({ port: 0, logLevel: 'silent' });
  const { code, report, stderr } = await run(twin.url, ['--reporter', 'json']);
  assert.is(code, 0, stderr);
  assert.equal(report.baseline, { url: twin.url, departedCases: 0 });
  assert.ok(report.cases.length > 10);
  assert.equal(
    report.cases.filter((c) => c.departures),
    [],
  );
});

test('the mock against one without fault headers: exactly the fault cases depart, in every reporter, keys masked; exit 1', async () => {
  noFaults = await start({
    port: 0,
    logLevel: 'silent',
    faultHeaders: false,
    keys: [{ key: BASELINE_KEY, label: 'baseline', scopes: SCOPES }],
  });
  const pretty = join(dir, 'pretty.txt');
  const junit = join(dir, 'junit.xml');
  const { code, report, stdout } = await run(noFaults.url, [
    '--baseline-api-key',
    BASELINE_KEY,
    '--reporter',
    'json',
    '--reporter',
    'pretty',
    '--output',
    pretty,
    '--reporter',
    'junit',
    '--output',
    junit,
  ]);
  assert.is(code, 1);
  const departed = report.cases.filter((c) => c.departures).map((c) => c.id);
  const faults = report.cases.filter((c) => c.tags.includes('fault')).map((c) => c.id);
  assert.ok(faults.length >= 10, `${faults.length} fault cases`);
  assert.equal(departed.sort(), faults.sort());
  // The cases themselves pass: the target is judged against the API document as ever.
  assert.equal(
    report.cases.filter((c) => c.verdict === 'fail'),
    [],
  );
  const me500 = report.cases.find((c) => c.id === 'fault.500.me')!;
  assert.equal(me500.departures, [
    { check: 'status', what: 'status', target: '5xx', baseline: '2xx' },
    { check: 'error-envelope', what: 'error envelope', target: 'present', baseline: 'absent' },
  ]);
  const me429 = report.cases.find((c) => c.id === 'fault.429.me')!;
  assert.ok(me429.departures!.some((d) => d.what === 'retry-after' && d.target === 'present'));
  const text = readFileSync(pretty, 'utf8');
  assert.match(text, `Compared with the baseline ${noFaults.url}`);
  assert.match(text, `Departures from the baseline (${faults.length} cases):`);
  assert.match(text, /fault\.500\.me: .*\n {4}status: target 5xx, baseline 2xx/);
  const xml = readFileSync(junit, 'utf8');
  assert.match(xml, `<testsuite name="baseline" tests="${faults.length}" failures="${faults.length}"`);
  assert.match(xml, /<testcase classname="baseline" name="fault\.500\.me: [^"]*" time="0.000">\n {6}<failure /);
  for (const shown of [stdout, text, xml]) {
    assert.not.ok(shown.includes(BASELINE_KEY), 'the baseline key is masked');
    assert.not.ok(shown.includes(KEY), 'the key is masked');
  }
});

test('--baseline-report-only: the departures are listed, the exit code is the verdicts', async () => {
  const { code, report } = await run(noFaults!.url, [
    '--baseline-api-key',
    BASELINE_KEY,
    '--baseline-report-only',
    '--reporter',
    'json',
  ]);
  assert.is(code, 0);
  assert.ok(report.baseline.departedCases >= 10);
});

test('usage: --baseline must be a URL; the baseline options need --baseline', async () => {
  const bad = await runCli(['--base-url', 'http://127.0.0.1:9', '--api-key', KEY, '--baseline', 'nope']);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /--baseline must be an http or https URL/);
  const lone = await runCli(['--base-url', 'http://127.0.0.1:9', '--api-key', KEY, '--baseline-report-only']);
  assert.is(lone.code, 2);
  assert.match(lone.stderr, /need --baseline/);
});

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Exchange => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  body: Buffer.from(JSON.stringify(body)),
  ms: 1,
});
const envelope = (fields: Record<string, unknown>) => ({ error: { message: 'm', ...fields } });
const sse = (text: string): Exchange => ({
  status: 200,
  headers: { 'content-type': 'text/event-stream' },
  body: Buffer.from(text),
  ms: 1,
});

test('compareExchanges: the status class, and the exact status of a 4xx', () => {
  assert.equal(compareExchanges(json(200, {}), json(201, {}), false), []);
  assert.equal(compareExchanges(json(500, {}), json(503, {}), false), []);
  assert.equal(compareExchanges(json(200, {}), json(500, {}), false), [
    { check: 'status', what: 'status', target: '2xx', baseline: '5xx' },
  ]);
  assert.equal(compareExchanges(json(401, {}), json(400, {}), false), [
    { check: 'status', what: 'status', target: '401', baseline: '400' },
  ]);
  assert.equal(compareExchanges({ ...json(200, {}), status: 0, error: 'reset' }, json(200, {}), false), [
    { check: 'status', what: 'status', target: 'no answer', baseline: '2xx' },
  ]);
});

test('compareExchanges: the error envelope, present or absent, and its type, code and param', () => {
  const a = envelope({ type: 'invalid_request_error', code: 'x', param: 'model' });
  assert.equal(compareExchanges(json(400, a), json(400, { ...a, error: { ...a.error, message: 'other' } }), false), []);
  assert.equal(compareExchanges(json(400, a), json(400, { detail: 'no envelope' }), false), [
    { check: 'error-envelope', what: 'error envelope', target: 'present', baseline: 'absent' },
  ]);
  assert.equal(
    compareExchanges(json(400, a), json(400, envelope({ type: 'invalid_request_error', code: 'y' })), false),
    [
      { check: 'error-envelope', what: 'error.code', target: '"x"', baseline: '"y"' },
      { check: 'error-envelope', what: 'error.param', target: '"model"', baseline: 'absent' },
    ],
  );
  assert.equal(compareExchanges(json(400, a), json(400, envelope({ ...a.error, type: 'other' })), false), [
    { check: 'error-envelope', what: 'error.type', target: '"invalid_request_error"', baseline: '"other"' },
  ]);
});

test('compareExchanges: retry-after and www-authenticate present or not, the media type of the content type', () => {
  const e = envelope({ type: 't' });
  assert.equal(
    compareExchanges(json(429, e, { 'retry-after': '1' }), json(429, e, { 'retry-after': '30' }), false),
    [],
  );
  assert.equal(compareExchanges(json(429, e, { 'retry-after': '1' }), json(429, e), false), [
    { check: 'header', what: 'retry-after', target: 'present', baseline: 'absent' },
  ]);
  assert.equal(compareExchanges(json(401, e), json(401, e, { 'www-authenticate': 'Bearer' }), false), [
    { check: 'header', what: 'www-authenticate', target: 'absent', baseline: 'present' },
  ]);
  assert.equal(
    compareExchanges(json(200, {}), json(200, {}, { 'content-type': 'Application/JSON' }), false),
    [],
    'parameters and case of the media type do not matter',
  );
  assert.equal(compareExchanges(json(200, {}), json(200, {}, { 'content-type': 'text/plain' }), false), [
    { check: 'header', what: 'content-type', target: 'application/json', baseline: 'text/plain' },
  ]);
});

test('compareExchanges: a streamed case is an event stream ending in data: [DONE] on both sides, or on neither', () => {
  const done = sse('data: {"a":1}\n\ndata: [DONE]\n\n');
  assert.equal(compareExchanges(done, sse('data: {"b":2}\n\ndata:[DONE]\n\n'), true), []);
  assert.equal(compareExchanges(done, sse('data: {"a":1}\n\n'), true), [
    { check: 'stream', what: 'stream', target: 'event stream ending in data: [DONE]', baseline: 'no such stream' },
  ]);
  assert.equal(compareExchanges(done, sse('data: {"a":1}\n\n'), false), [], 'only a streamed case is compared so');
});

test.run();
