import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SchemaRegistry } from '../../../src/contract/schemas.js';
import { Catalogue } from '../../../src/domain/catalogue.js';
import {
  conformanceHelp,
  parseConformanceArgs,
  type ConformanceOptions,
} from '../../../src/tools/conformance/options.js';
import {
  brokenServer,
  closeSharedMock,
  everyReporter,
  runCli,
  runJson,
  sharedMock,
  type BrokenServer,
  type JsonReport,
} from './harness.js';
import { junitProblems, junitTestcases, parseTap } from '../../support/reports.js';

const test = suite('conformance levels: a should departure is a warning (exit 0), a failure with --strict or in full');

// The cases whose shape the API document describes without making it a rule.
const SHOULD = [
  'edit.image.data-uri-wrong-media-type',
  'speech.voice.pattern-mismatch',
  'speech@ssml.voice.pattern-mismatch',
  'tts.voice_id.pattern-mismatch',
];

/**
 * A server as correct as the API document asks: it takes any voice string and a data URI of any media
 * type. It sends the mock a voice the mock knows and the image media type instead, so it answers those
 * requests with the 200 the mock gives a valid one; everything else reaches the mock unchanged.
 */
const lenient = (): Promise<BrokenServer> =>
  brokenServer({
    request: (r) => {
      if (!r.json) return;
      if (typeof r.json.voice_id === 'string') r.json.voice_id = 'rachel';
      if (typeof r.json.voice === 'string') r.json.voice = 'en-US-JennyNeural';
      if (typeof r.json.image === 'string')
        r.json.image = r.json.image.replace(/^data:[^;,]*;base64,/, 'data:image/png;base64,');
    },
  });

const idsWith = (report: JsonReport, verdict: string) =>
  report.cases
    .filter((c) => c.verdict === verdict)
    .map((c) => c.id)
    .sort();

let server: BrokenServer;
const dir = mkdtempSync(join(tmpdir(), 'conformance-levels-'));

test.before(async () => {
  server = await lenient();
});

test.after(async () => {
  await server.close();
  await closeSharedMock();
  rmSync(dir, { recursive: true, force: true });
});

test('the should cases are the four shapes the document only describes; --plan shows each case level', async () => {
  const { report } = await runJson((await sharedMock()).url, ['--only', 'tts,speech,edit']);
  assert.equal(
    report.cases
      .filter((c) => c.level === 'should')
      .map((c) => c.id)
      .sort(),
    SHOULD,
  );
  assert.ok(report.cases.filter((c) => c.level === 'must').length > 100);
  const plan = await runCli(['--plan', '--only', 'tts.voice_id,tts.text.missing']);
  assert.is(plan.code, 0);
  assert.match(plan.stdout, /\n {2}400 {2}should tts\.voice_id\.pattern-mismatch +free/);
  assert.match(plan.stdout, /\n {2}400 {2}must {3}tts\.text\.missing +free/);
});

test('--strict: off unless given; the help names it', () => {
  const catalogue = new Catalogue(SchemaRegistry.shared());
  const parse = (argv: string[]) =>
    parseConformanceArgs(['--base-url', 'http://h', '--api-key', 'k', ...argv], catalogue, {}) as ConformanceOptions;
  assert.is(parse([]).strict, false);
  assert.is(parse(['--strict']).strict, true);
  assert.match(conformanceHelp(catalogue), /\n {2}--strict {16}fail the run on should cases too/);
});

test('a server that takes any voice string and any data-URI media type: no failure in the documented profile, exit 0', async () => {
  const { code, report } = await runJson(server.url);
  assert.equal(idsWith(report, 'fail'), []);
  assert.equal(idsWith(report, 'warn'), SHOULD);
  assert.is(report.summary.warnings, SHOULD.length);
  assert.is(report.summary.failed, 0);
  assert.is(code, 0);
});

test('the mock itself: no warning', async () => {
  const { code, report } = await runJson((await sharedMock()).url, ['--only', 'tts,speech,edit']);
  assert.is(report.summary.warnings, 0);
  assert.is(report.summary.failed, 0);
  assert.is(code, 0);
});

test('--strict: the should departures fail the run, exit 1', async () => {
  const { code, failed, report } = await runJson(server.url, ['--only', SHOULD.join(','), '--strict']);
  assert.equal(failed, SHOULD);
  assert.is(report.summary.warnings, 0);
  assert.is(code, 1);
});

test('the full profile holds a server to the mock own shapes: a departure fails there', async () => {
  const { code, failed } = await runJson(server.url, ['--profile', 'full', '--only', 'tts.voice_id.pattern-mismatch']);
  assert.equal(failed, ['tts.voice_id.pattern-mismatch']);
  assert.is(code, 1);
});

test('every reporter shows the warnings; none fails on them', async () => {
  const files = { json: join(dir, 'r.json'), junit: join(dir, 'r.xml'), tap: join(dir, 'r.tap') };
  const out = await runCli([
    ...['--base-url', server.url, '--api-key', 'sk-mock-default', '--only', [...SHOULD, 'tts.minimal'].join(',')],
    ...everyReporter(files),
  ]);
  assert.is(out.code, 0, out.stderr);

  // pretty: a W per warning, the warnings in detail with the sentence they cite, the count in the closing line.
  assert.match(out.stdout, /^[.W]+ 5\/5$/m);
  assert.is((/^[.W]+ 5\/5$/m.exec(out.stdout)![0].match(/W/g) ?? []).length, 4);
  assert.match(
    out.stdout,
    /\nWarnings \(the API document describes these shapes without making them rules; --strict fails them\):\n/,
  );
  assert.match(
    out.stdout,
    /\d\) tts\.voice_id\.pattern-mismatch: .*\n {3}should: {3}Voice-provider speech request: voice_id is described as "a short lowercase voice label"/,
  );
  assert.match(out.stdout, /expected: status 400\n {3}actual: {3}status 200/);
  assert.not.match(out.stdout, /Failures:/);
  assert.match(out.stdout, /\n1 passed, 0 failed, 4 warnings, 0 inconclusive, 0 not applicable\n$/);

  // JSON: the level of every case, the verdict warn and the count.
  const report = JSON.parse(readFileSync(files.json, 'utf8')) as JsonReport;
  assert.equal(idsWith(report, 'warn'), SHOULD);
  assert.ok(report.cases.every((c) => c.level === (SHOULD.includes(c.id) ? 'should' : 'must')));
  assert.ok(report.cases.filter((c) => c.verdict === 'warn').every((c) => c.failures[0]?.check === 'status'));
  assert.is(report.summary.warnings, 4);

  // JUnit: a warning is a passed testcase (neither failure nor skipped) with the level and the departure in system-out.
  const junit = readFileSync(files.junit, 'utf8');
  const problems = junitProblems(junit);
  if (problems) assert.equal(problems, [], 'valid against the JUnit schema');
  assert.match(junit, /<testsuites name="unified-ai-mock conformance" tests="5" failures="0" errors="0" /);
  const testcases = junitTestcases(junit);
  const warned = testcases.filter((t) => t.systemOut !== undefined);
  assert.equal(warned.map((t) => t.name.split(':')[0]).sort(), SHOULD);
  for (const t of warned) {
    assert.is(t.failure, undefined);
    assert.is(t.skipped, undefined);
    assert.match(
      t.systemOut!,
      /^warning \(level should\): .+\n(.|\n)*\[status\] expected: status 400\n\[status\] actual: {3}status 200/,
    );
  }

  // TAP: every test point ok; each warning carries a diagnostic block with severity: warning.
  const tap = readFileSync(files.tap, 'utf8').split('\n');
  const points = tap.filter((l) => /^(not )?ok \d+ - /.test(l));
  assert.is(points.length, 5);
  assert.ok(points.every((l) => l.startsWith('ok ') && !l.includes('#')));
  for (const id of SHOULD) {
    const at = tap.findIndex((l) => l.includes(` - ${id} - `));
    assert.equal(tap.slice(at + 1, at + 4), ['  ---', '  severity: warning', '  level: should']);
  }
  assert.is(tap.filter((l) => l === '  severity: warning').length, 4);
  assert.is(tap.at(-2), '# 1 passed, 0 failed, 4 warnings, 0 inconclusive, 0 not applicable');
  // As a TAP 14 parser reads it: five passed points, each warning's diagnostics parsed as YAML.
  const parsed = parseTap(readFileSync(files.tap, 'utf8'));
  assert.equal(parsed.problems, []);
  assert.ok(parsed.points.every((p) => p.ok));
  const diagnosed = parsed.points.filter((p) => p.diag);
  assert.is(diagnosed.length, 4);
  for (const p of diagnosed) {
    assert.is(p.diag!.severity, 'warning');
    assert.is(p.diag!.level, 'should');
    assert.match(String(p.diag!.request), /^POST http:\/\/127\.0\.0\.1:\d+\//);
    assert.is((p.diag!.failures as { check: string }[])[0]!.check, 'status');
  }
});

test.run();
