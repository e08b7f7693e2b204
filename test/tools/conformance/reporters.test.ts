import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { jsonReportProblems, junitProblems, junitTestcases, parseTap } from '../../support/reports.js';
import { brokenServer, closeSharedMock, everyReporter, runCli, type JsonReport } from './harness.js';

const test = suite(
  'conformance reporters: pretty, JSON, JUnit XML, TAP; read by real parsers, the key masked everywhere',
);

const SECRET = 'sk-conformance-secret-0123456789abcdef';
const MASKED = 'sk-c...cdef';
const dir = mkdtempSync(join(tmpdir(), 'conformance-reports-'));
const outputs: Record<string, string> = {};
let report: JsonReport;

test.before(async () => {
  // The target knows the secret key; it accepts temperature 3 and echoes the Authorization header when it
  // does (a leak the reports must not repeat), and rate-limits the Basic-scheme case forever.
  const server = await brokenServer({
    request: (r) => {
      r.headers['x-original-authorization'] = r.headers.authorization ?? '';
      if (r.headers.authorization?.includes(SECRET))
        r.headers.authorization = r.headers.authorization.replace(SECRET, 'sk-mock-default');
    },
    response: (res, req) => {
      if (typeof req.json?.temperature === 'number' && req.json.temperature > 2) {
        res.status = 200;
        res.body = Buffer.from(JSON.stringify({ echo: req.headers['x-original-authorization'] }));
      }
      if (req.headers['x-original-authorization']?.toString().startsWith('Basic') && req.path.includes('chat')) {
        res.status = 429;
        res.headers['retry-after'] = '0';
      }
    },
  });
  try {
    const files = { json: join(dir, 'r.json'), junit: join(dir, 'sub', 'r.xml'), tap: join(dir, 'r.tap') };
    const out = await runCli([
      '--base-url',
      server.url,
      '--api-key',
      SECRET,
      '--only',
      'chat.temperature,auth.basic.chat,auth.basic.me,images.n',
      '--image-model',
      'gpt-image-1',
      '--retries',
      '0',
      ...everyReporter(files),
    ]);
    assert.is(out.code, 1);
    outputs.pretty = out.stdout;
    for (const [name, file] of Object.entries(files)) outputs[name] = readFileSync(file, 'utf8');
    report = JSON.parse(outputs.json!) as JsonReport;
  } finally {
    await server.close();
  }
});

test.after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await closeSharedMock();
});

test('the run has every verdict: pass, fail, inconclusive, not applicable', () => {
  const { passed, failed, inconclusive, notApplicable, total } = report.summary;
  assert.ok(passed > 0 && failed === 1 && inconclusive === 1 && notApplicable === 1);
  assert.is(passed + failed + inconclusive + notApplicable, total);
  assert.is(report.cases.find((c) => c.verdict === 'fail')!.id, 'chat.temperature.above-maximum');
});

test('the key appears in no output, masked or echoed', () => {
  for (const [name, text] of Object.entries(outputs)) {
    assert.not.ok(text.includes(SECRET), `${name} leaks the key`);
    assert.ok(text.includes(MASKED), `${name} shows the masked key`);
  }
});

test('pretty: progress marks, the failure with request, expected, actual and rule, and the closing counts line', () => {
  const text = outputs.pretty!;
  assert.match(text, /\(\. pass {2}F fail {2}W warning {2}\? inconclusive {2}- not applicable\)\n[.F?-]+ \d+\/\d+\n/);
  assert.match(text, /1\) chat\.temperature\.above-maximum: temperature = 2\.01/);
  assert.match(text, /rule: {5}Chat request and Limits: temperature is a number from 0 to 2/);
  assert.match(
    text,
    /request: {2}POST http:\/\/127\.0\.0\.1:\d+\/text-provider\/chat\/completions\n {13}authorization: Bearer sk-c\.\.\.cdef/,
  );
  assert.match(text, /expected: status 400\n {3}actual: {3}status 200 \{"echo":"Bearer sk-c\.\.\.cdef"\}/);
  assert.match(text, /Inconclusive:\n {2}auth\.basic\.chat: rate limited \(429\)/);
  assert.match(text, /Not applicable:\n {2}1 case: the rule applies to dall-e-3; the image model is gpt-image-1/);
  const lines = text.trimEnd().split('\n');
  assert.match(lines[lines.length - 1]!, /^\d+ passed, 1 failed, 0 warnings, 1 inconclusive, 1 not applicable$/);
});

test('JUnit XML: valid against the JUnit schema, one testsuite per operation, one testcase per case, failures and skips', () => {
  const problems = junitProblems(outputs.junit!);
  if (problems) assert.equal(problems, []);
  assert.match(
    outputs.junit!,
    new RegExp(
      `<testsuites name="unified-ai-mock conformance" tests="${report.summary.total}" failures="1" errors="0" `,
    ),
  );
  const testcases = junitTestcases(outputs.junit!);
  assert.is(testcases.length, report.summary.total);
  assert.equal([...new Set(testcases.map((t) => t.suite))].sort(), ['chat.completions', 'images.generate', 'me']);
  assert.equal(testcases.map((t) => t.name.split(':')[0]).sort(), report.cases.map((c) => c.id).sort());
  const failed = testcases.filter((t) => t.failure);
  assert.is(failed.length, 1);
  assert.is(failed[0]!.failure!.type, 'status');
  assert.match(failed[0]!.failure!.text, /^rule: Chat request and Limits: temperature/);
  assert.match(failed[0]!.failure!.text, /authorization: Bearer sk-c\.\.\.cdef/);
  assert.is(testcases.filter((t) => t.skipped).length, 2);
  for (const suite of new Set(testcases.map((t) => t.suite)))
    assert.match(
      outputs.junit!,
      `<testsuite name="${suite}" tests="${testcases.filter((t) => t.suite === suite).length}" `,
    );
});

test('TAP: read by a TAP 14 parser: a plan, one test point per case in order, YAML diagnostics for the failure, SKIP for the rest', () => {
  const tap = parseTap(outputs.tap!);
  assert.equal(tap.problems, []);
  assert.is(tap.version, 13);
  assert.equal([tap.plan?.start, tap.plan?.end], [1, report.summary.total]);
  assert.equal(
    tap.points.map((p) => [p.id, p.name.split(' - ')[0]]),
    report.cases.map((c, i) => [i + 1, c.id]),
  );
  const failed = tap.points.filter((p) => !p.ok);
  assert.is(failed.length, 1);
  assert.match(String(failed[0]!.diag!.rule), /^Chat request and Limits: temperature/);
  assert.match(String(failed[0]!.diag!.request), /authorization: Bearer sk-c\.\.\.cdef/);
  assert.equal(failed[0]!.diag!.failures, [
    { check: 'status', expected: 'status 400', actual: 'status 200 {"echo":"Bearer sk-c...cdef"}' },
  ]);
  assert.equal(
    tap.points.filter((p) => p.skip).map((p) => p.skip),
    [
      'inconclusive: rate limited (429)',
      'not-applicable: the rule applies to dall-e-3; the image model is gpt-image-1 (--image-n-max-1 says it is the named model)',
    ],
  );
});

test('JSON: valid against schemas/conformance-report.json, with the answer got beside the request sent', () => {
  assert.equal(jsonReportProblems(report), []);
  const failed = (
    report as unknown as { cases: { verdict: string; response?: { status: number; body?: string } }[] }
  ).cases.find((c) => c.verdict === 'fail')!;
  assert.equal(failed.response?.status, 200);
  assert.is(failed.response?.body, '{"echo":"Bearer sk-c...cdef"}');
});

test.run();
