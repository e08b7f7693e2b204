import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { brokenServer, closeSharedMock, everyReporter, runCli, type JsonReport } from './harness.js';

const test = suite('conformance reporters: pretty, JSON, JUnit XML, TAP 13; the key masked everywhere');

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

test('JUnit XML: well-formed, one testsuite per operation, one testcase per case, failures and skips', () => {
  assert.is(XMLValidator.validate(outputs.junit!), true);
  const doc = new XMLParser({
    ignoreAttributes: false,
    isArray: (name) => ['testsuite', 'testcase'].includes(name),
  }).parse(outputs.junit!) as {
    testsuites: {
      '@_tests': string;
      '@_failures': string;
      '@_skipped': string;
      testsuite: {
        '@_name': string;
        '@_tests': string;
        testcase: { '@_name': string; failure?: unknown; skipped?: unknown }[];
      }[];
    };
  };
  const root = doc.testsuites;
  assert.is(Number(root['@_tests']), report.summary.total);
  assert.is(Number(root['@_failures']), 1);
  assert.is(Number(root['@_skipped']), 2);
  assert.equal(root.testsuite.map((s) => s['@_name']).sort(), ['chat.completions', 'images.generate', 'me']);
  const testcases = root.testsuite.flatMap((s) => s.testcase);
  assert.is(testcases.length, report.summary.total);
  assert.is(testcases.filter((t) => t.failure !== undefined).length, 1);
  assert.is(testcases.filter((t) => t.skipped !== undefined).length, 2);
  for (const s of root.testsuite) assert.is(Number(s['@_tests']), s.testcase.length);
});

test('TAP 13: version line, plan line, one test point per case, YAML diagnostics for the failure, SKIP for the rest', () => {
  const lines = outputs.tap!.split('\n');
  assert.is(lines[0], 'TAP version 13');
  assert.is(lines[1], `1..${report.summary.total}`);
  const points = lines.filter((l) => /^(not )?ok \d+ - /.test(l));
  assert.is(points.length, report.summary.total);
  points.forEach((l, i) => assert.match(l, new RegExp(`^(not )?ok ${i + 1} - `)));
  assert.is(points.filter((l) => l.startsWith('not ok')).length, 1);
  assert.is(points.filter((l) => / # SKIP (inconclusive|not-applicable): /.test(l)).length, 2);
  const at = lines.findIndex((l) => l.startsWith('not ok'));
  assert.is(lines[at + 1], '  ---');
  assert.ok(lines.slice(at + 2).includes('  ...'));
});

test.run();
