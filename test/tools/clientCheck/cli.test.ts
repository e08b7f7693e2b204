// `unified-ai-mock client-check`: usage errors and exit codes, the reporters, a command that cannot run,
// a client stopped past its deadline, and the wiring into the CLI.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../../../src/lib/paths.js';
import { cli as command } from '../../support/child.js';
import { startMockServer } from '../../../src/server/programmatic.js';
import { clientCheck, parseClientCheckArgs } from '../../../src/tools/clientCheck/cli.js';
import { commandLaunch } from '../../../src/tools/clientCheck/command.js';
import { runScenario } from '../../../src/tools/clientCheck/run.js';
import type { Scenario } from '../../../src/tools/clientCheck/scenarios.js';
import { junitProblems } from '../../support/reports.js';

const startMock = (config: object) => startMockServer(config);
const dir = mkdtempSync(join(tmpdir(), 'client-check-cli-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the command in this process; resolves to its exit code and what it wrote. */
async function run(argv: string[], signal?: AbortSignal): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await clientCheck(
    argv,
    { startMock },
    { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), ...(signal ? { signal } : {}) },
  );
  return { code, stdout, stderr };
}

// One chat completion, no retry: exit 0 when it succeeds.
const ONE_SHOT = `fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST',
  headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: process.env.MOCK_SCENARIO }] }) })
  .then((r) => { console.log('status', r.status); process.exit(r.ok ? 0 : 1); });`;
const oneShot = [process.execPath, '-e', ONE_SHOT];

test('usage errors exit 2 and say what is wrong', async () => {
  const cases: [string[], RegExp][] = [
    [[], /no command to check: give it after '--'/],
    [['node', 'x.mjs'], /unexpected argument 'node': put the command to check after '--'/],
    [['--reporter', 'tap', '--', 'node'], /--reporter must be one of pretty, json, junit, got 'tap'/],
    [
      ['--client-timeout', 'soon', '--', 'node'],
      /--client-timeout must be a whole number of ms from 1 to 300000, got 'soon'/,
    ],
    [['--client-timeout', '0', '--', 'node'], /--client-timeout must be/],
    [['--output', 'x.json', '--', 'node'], /--output must follow the --reporter it is for/],
    [['--reporter', 'json', '--reporter', 'junit', '--', 'node'], /only one reporter can write to standard output/],
    [['--scenario', 'stream,nope', '--', 'node'], /no scenario or tag named 'nope'; scenarios: /],
    [['--bogus', '--', 'node'], /unknown option '--bogus'/],
    [['--scenaro', 'x', '--', 'node'], /unknown option '--scenaro'; did you mean '--scenario'\?/],
  ];
  for (const [argv, message] of cases) {
    const out = await run(argv);
    assert.is(out.code, 2, argv.join(' '));
    assert.match(out.stderr, message, argv.join(' '));
    assert.match(out.stderr, /Run 'unified-ai-mock client-check --help' for the options/);
  }
  assert.equal(
    parseClientCheckArgs(['--scenario', 'a, b', '--scenario', 'c', '--client-timeout', '250', '--', 'node', '--flag']),
    {
      scenarios: ['a', 'b', 'c'],
      clientTimeoutMs: 250,
      reporters: [{ name: 'pretty' }],
      list: false,
      command: ['node', '--flag'],
    },
  );
});

test('--help and --list exit 0 and run nothing', async () => {
  const help = await run(['--help']);
  assert.is(help.code, 0);
  assert.match(help.stdout, /^Usage: unified-ai-mock client-check \[options\] -- <command> \[args\.\.\.\]/);
  const list = await run(['--list', '--scenario', 'no-retry']);
  assert.is(list.code, 0);
  assert.match(
    list.stdout,
    /^bad-request-400 {2}\[no-retry\]\n {2}400: never retried\n {2}a good client: Reports the error after one attempt\./,
  );
  assert.match(list.stdout, /should-retry-false/);
  assert.not.match(list.stdout, /stream-cut/);
});

test('a command that cannot be run is a usage error (exit 2), not a failing client', async () => {
  const missing = await run(['--scenario', 'bad-request-400', '--', join(dir, 'no-such-client')]);
  assert.is(missing.code, 2);
  assert.match(missing.stderr, /cannot run '.*no-such-client': command not found/);
  const viaShell = await run(['--scenario', 'bad-request-400', '--', 'sh', '-c', 'no-such-client-here']);
  assert.is(viaShell.code, 2);
  assert.match(viaShell.stderr, /exit 127 \(command not found\)/);
});

test('reports: pretty with progress on stdout, JSON and JUnit to files; a failed scenario exits 1', async () => {
  const json = join(dir, 'r.json');
  const junit = join(dir, 'sub', 'r.xml');
  const out = await run([
    '--scenario',
    'bad-request-400,same-body-on-retry,stream-cut',
    '--reporter',
    'pretty',
    '--reporter',
    'json',
    '--output',
    json,
    '--reporter',
    'junit',
    '--output',
    junit,
    '--',
    ...oneShot,
  ]);
  assert.is(out.code, 1, out.stdout + out.stderr);
  assert.match(out.stdout, /^Client check of [^]* \(no client timeout declared\): 3 scenarios\n/);
  assert.match(out.stdout, /\n {2}pass {2}bad-request-400 {5}1 attempt: 400; exit 1 \(\d+\.\d s\) {2}\[1\/3\]\n/);
  assert.match(out.stdout, /\n {2}FAIL {2}same-body-on-retry {2}1 attempt: 500; exit 1 .*\[2\/3\]\n/);
  assert.match(
    out.stdout,
    /\n {2}n\/a {3}stream-cut {10}the client never streamed an answer \(stream: true\) \(\d+\.\d s\) {2}\[3\/3\]\n/,
  );
  assert.match(
    out.stdout,
    /Failures:\n\n1\) same-body-on-retry: A retry sends the same request body\n {3}why: {6}A retry is the same request again/,
  );
  assert.match(
    out.stdout,
    /expected: at least 2 attempts \(it retries\) \[attempts\]\n {3}actual: {3}1 attempt \(status 500\)\n/,
  );
  assert.match(
    out.stdout,
    /journal: {2}#1, at 0 ms, \d+ ms long, status 500, retry-after-ms 100, body [0-9a-f]{12}\n {3}client: {3}exit 1\n {3}output \(last lines\):\n {5}status 500\n/,
  );
  assert.match(out.stdout, /\n3 scenarios in \d+\.\d s\n1 passed, 1 failed, 1 not applicable\n$/);

  const report = JSON.parse(readFileSync(json, 'utf8')) as {
    tool: string;
    clientTimeoutMs: null;
    summary: { total: number; passed: number; failed: number; notApplicable: number };
    scenarios: {
      id: string;
      verdict: string;
      failures: { check: string }[];
      attempts: { status: number; bodyHash: string; start: number }[];
      client?: { exitCode: number; output: string };
    }[];
  };
  assert.is(report.tool, 'unified-ai-mock client-check');
  assert.is(report.clientTimeoutMs, null);
  assert.equal({ ...report.summary, ms: 0 }, { total: 3, passed: 1, failed: 1, notApplicable: 1, ms: 0 });
  assert.equal(
    report.scenarios.map((s) => [s.id, s.verdict, s.failures.map((f) => f.check)]),
    [
      ['bad-request-400', 'pass', []],
      ['same-body-on-retry', 'fail', ['attempts', 'exit']],
      ['stream-cut', 'not-applicable', []],
    ],
  );
  const [first] = report.scenarios[0]!.attempts;
  assert.is(first!.status, 400);
  assert.match(first!.bodyHash, /^[0-9a-f]{64}$/);
  assert.is(report.scenarios[0]!.client!.exitCode, 1);

  const xml = readFileSync(junit, 'utf8');
  const problems = junitProblems(xml);
  if (problems) assert.equal(problems, [], 'valid against the JUnit schema');
  const doc = new XMLParser({ ignoreAttributes: false }).parse(xml) as {
    testsuites: {
      '@_tests': string;
      '@_failures': string;
      testsuite: { '@_skipped': string; testcase: Record<string, unknown>[] };
    };
  };
  assert.equal(
    [doc.testsuites['@_tests'], doc.testsuites['@_failures'], doc.testsuites.testsuite['@_skipped']],
    ['3', '1', '1'],
  );
  const [pass, fail, skipped] = doc.testsuites.testsuite.testcase;
  assert.is(pass!['@_name'], 'bad-request-400: 400: never retried');
  assert.match(
    String((fail!.failure as Record<string, string>)['@_message']),
    /^expected at least 2 attempts \(it retries\), got 1 attempt \(status 500\)/,
  );
  assert.match(String((fail!.failure as Record<string, string>)['#text']), /journal:\n#1, at 0 ms/);
  assert.match(
    String((skipped!.skipped as Record<string, string>)['@_message']),
    /^not applicable: the client never streamed/,
  );
});

test('all scenarios pass or are not applicable: exit 0', async () => {
  const out = await run(['--scenario', 'bad-request-400,unauthorized-401', '--reporter', 'json', '--', ...oneShot]);
  assert.is(out.code, 0, out.stdout);
  assert.is((JSON.parse(out.stdout) as { summary: { passed: number } }).summary.passed, 2);
});

test('a client that outlives its deadline is stopped, with everything it started, and fails', async () => {
  const hang: Scenario = {
    id: 'hang',
    title: 'hang',
    why: 'why',
    good: 'good',
    deadlineMs: 3000,
    mock: {},
    expect: { exit: 'success' },
  };
  // The command starts a child that shares its output pipes: the run could not end if that child lived on.
  const script = `${ONE_SHOT.replace('process.exit(r.ok ? 0 : 1)', 'setInterval(() => {}, 1000)')}; require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'inherit' });`;
  const started = performance.now();
  const grade = await runScenario(hang, commandLaunch([process.execPath, '-e', script]), startMock);
  assert.ok(performance.now() - started < 15_000, 'stopped, not waited for');
  assert.is(grade.verdict, 'fail');
  assert.is(grade.outcome!.stopped, 'deadline');
  assert.is(grade.outcome!.signal, 'SIGTERM');
  assert.is(grade.outcome!.output, 'status 200\n', 'the output, without colour codes');
  assert.equal(
    grade.failures.map((f) => f.check),
    ['finished'],
  );
  assert.match(grade.failures[0]!.actual, /^it was still running after \d+ ms \(1 attempt\) and was stopped$/);
});

test('a callback past its deadline is left behind once its mock is closed', async () => {
  const hang: Scenario = {
    id: 'hang',
    title: 'hang',
    why: 'why',
    good: 'good',
    deadlineMs: 1000,
    mock: {},
    expect: { exit: 'success' },
  };
  const grade = await runScenario(hang, () => new Promise(() => {}), startMock);
  assert.is(grade.outcome!.stopped, 'deadline');
  assert.is(grade.outcome!.exitCode, null);
  assert.match(grade.reason!, /sent no request in \d+ ms and was stopped/);
});

test('Ctrl-C stops the client and the run exits 130', async () => {
  const stop = new AbortController();
  setTimeout(() => stop.abort(), 300);
  const started = performance.now();
  const out = await run(
    ['--scenario', 'bad-request-400', '--', process.execPath, '-e', 'setInterval(() => {}, 1000)'],
    stop.signal,
  );
  assert.is(out.code, 130);
  assert.ok(performance.now() - started < 10_000);
});

test('the command is wired into the CLI', () => {
  const { args: node, env } = command();
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [...node, ...args], { cwd: ROOT, encoding: 'utf8', env });
  const list = cli('client-check', '--list', '--scenario', 'stream-cut');
  assert.is(list.status, 0, list.stderr);
  assert.match(list.stdout, /^stream-cut {2}\[stream; needs: stream\]/);
  assert.match(cli('--help').stdout, /client-check {2}grade a client of the API/);
  assert.is(cli('client-check').status, 2);
});

test.run();
