// The keys people type first, against the mock that knows them: `test`, `key`, `a`, metacharacters, a long key. Every
// reporter's file is read by a real parser, holds every case, and never shows a long key; the run passes as with any
// other key. (test/property/reports.test.ts tries thousands of keys against an echoing target.)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultKeys } from '../../../src/domain/config.js';
import { maskKey } from '../../../src/domain/keys.js';
import { start, type RunningMock } from '../../../src/server/server.js';
import { jsonReportProblems, junitProblems, junitTestcases, parseTap } from '../../support/reports.js';
import { runCli, type JsonReport } from './harness.js';

const test = suite('conformance reports with common-word and metacharacter keys: every report parses');

const KEYS = ['test', 'key', 'a', `<&>"'`, 'sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z', 'testcase'];
const SCOPES = defaultKeys()[0]!.scopes;
const dir = mkdtempSync(join(tmpdir(), 'conformance-keys-'));
// A mock per key, knowing that key alone: a near miss of one key may be another (`testcase` cut short is `test`).
let mock: RunningMock | undefined;

test.after.each(async () => {
  await mock?.close();
  mock = undefined;
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

for (const [n, key] of KEYS.entries()) {
  test(`--api-key ${JSON.stringify(key)}: JSON, JUnit, TAP and HTML parse, with every case, and the run passes`, async () => {
    const file = (ext: string) => join(dir, `${n}.${ext}`);
    mock = await start({ port: 0, logLevel: 'silent', keys: [{ key, scopes: SCOPES }] });
    const out = await runCli([
      ...['--base-url', mock.url, '--api-key', key, '--only', 'auth,chat.temperature,me,tts.voice_id'],
      ...['--reporter', 'pretty', '--reporter', 'json', '--output', file('json')],
      ...['--reporter', 'junit', '--output', file('xml'), '--reporter', 'tap', '--output', file('tap')],
      ...['--reporter', 'html', '--output', file('html')],
    ]);
    assert.is(out.code, 0, out.stdout);
    assert.is(out.stderr, '');
    const json = readFileSync(file('json'), 'utf8');
    const report = JSON.parse(json) as JsonReport;
    assert.equal(jsonReportProblems(report), []);
    assert.is(report.summary.failed, 0);
    const ids = report.cases.map((c) => c.id);
    assert.ok(ids.length > 90, `${ids.length} cases`);
    const xml = readFileSync(file('xml'), 'utf8');
    const problems = junitProblems(xml);
    if (problems) assert.equal(problems, []);
    assert.equal(
      junitTestcases(xml)
        .map((t) => t.name.split(':')[0])
        .sort(),
      [...ids].sort(),
    );
    const tapText = readFileSync(file('tap'), 'utf8');
    const tap = parseTap(tapText);
    assert.equal(tap.problems, []);
    assert.is(tap.plan?.end, ids.length);
    assert.equal(
      tap.points.map((p) => p.name.split(' - ')[0]),
      ids,
    );
    const html = readFileSync(file('html'), 'utf8');
    const data = /<script type="application\/json" id="report-data">([^<]*)<\/script>/.exec(html);
    assert.equal(
      (JSON.parse(data![1]!) as JsonReport).cases.map((c) => c.id),
      ids,
    );
    assert.match(out.stdout, /\d+ passed, 0 failed, 0 warnings, 0 inconclusive, \d+ not applicable\n$/);
    // Where the key was sent, its mask; a long key nowhere else, though it is a JUnit element's name.
    assert.is(report.cases.find((c) => c.id === 'me.valid')!.request.headers.authorization, `Bearer ${maskKey(key)}`);
    if (key.length >= 8)
      for (const text of [json, xml.replace(/<\/?testcase\b/g, ''), tapText, html, out.stdout])
        assert.not.ok(text.includes(key), 'no long key');
  });
}

test.run();
