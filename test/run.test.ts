// The project's test runner (test/run.ts), run as a child on the suites of test/hookSuites and the files of
// test/runFiles: a suite whose before, after or after.each hook throws fails the run, printed with its suite and the
// hook's error, where uvu's own command passes such a run in silence; a run whose hooks succeed prints what uvu's own
// command prints. Each file runs in a process of its own, its report printed whole; a file that fails, ends early or
// stays up fails the run, named in the summary; --bail stops at the first; coverage is collected from every file.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../src/lib/paths.js';
import { childEnv } from './support/index.js';
import { reported } from './support/uvu.js';

interface Run {
  readonly code: number | null;
  readonly output: string;
}

// The runs' own record of durations: the order of their files is uvu's, whatever the project's runs recorded.
const scratch = mkdtempSync(join(tmpdir(), 'uam-run-test-'));
test.after(() => rmSync(scratch, { recursive: true, force: true }));
const ENV = { RUN_DURATIONS: join(scratch, 'durations.json') };

const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, '');

/** Runs the files of test/hookSuites whose path matches pattern with a runner (the project's by default); resolves
 * with its exit code and its output, colours removed. */
function run(pattern: string, runner = 'test/run.ts'): Run {
  const out = spawnSync(process.execPath, ['--import', 'tsx', runner, 'test/hookSuites', pattern], {
    cwd: ROOT,
    env: childEnv(ENV),
    encoding: 'utf8',
  });
  return { code: out.status, output: plain(`${out.stdout}${out.stderr}`) };
}

/** Runs the project's runner on the files of test/runFiles whose path matches pattern, with more arguments and
 * environment; resolves with its exit code and its output, colours removed. */
function runFiles(pattern: string, args: readonly string[] = [], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/run.ts', 'test/runFiles', pattern, ...args], {
    cwd: ROOT,
    env: childEnv({ ...ENV, ...env }),
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output: plain(output) })));
}

/** The runner's summary: what it prints after the last file's report. */
const summaryOf = (output: string): string => output.slice(output.search(/\n {2}Slowest|\n {2}Failed:|\n {2}Total:/));

const UVU = 'node_modules/uvu/bin.js';
const totals = (output: string): string => output.slice(output.indexOf('Total:')).replace(/Duration:.*/, '');

test('a before hook that throws fails the run, with its suite, its error and the tests it kept from running', () => {
  // The premise: uvu's own command passes this file, having run none of its tests.
  const bare = run('before\\.ts$', UVU);
  assert.is(bare.code, 0, bare.output);
  assert.not.match(bare.output, /FAIL|did not start/);

  const { code, output } = run('before\\.ts$');
  assert.is(code, 1, output);
  assert.match(
    output,
    /FAIL {2}before\.ts › starting {2}"before hook: 2 tests not run"\n {4}the server did not start\n/,
  );
  assert.match(output, /at .*test\/hookSuites\/before\.ts:8:/, 'the stack leads to the throw');
  assert.match(totals(output), /Total: {5}2\n {2}Passed: {4}0\n/);
});

test('an after hook that rejects fails the run, with its suite and its error, and the next suite still runs', () => {
  const { code, output } = run('after\\.ts$');
  assert.is(code, 1, output);
  assert.match(output, /FAIL {2}after\.ts › cleaning {2}"after hook"\n {4}the temporary folder would not go\n/);
  assert.match(output, / next {2}• {3}\(1 \/ 1\)/);
  assert.match(totals(output), /Total: {5}2\n {2}Passed: {4}2\n/);
});

test('an after.each hook that throws fails the run, and neither hides a failed test nor skips the next', () => {
  const { code, output } = run('afterEach\\.ts$');
  assert.is(code, 1, output);
  assert.match(output, /FAIL {2}each {2}"fails"\n {4}the test failed/);
  assert.is(output.match(/FAIL {2}afterEach\.ts › each {2}"after\.each hook"\n {4}the test left a mess\n/g)?.length, 2);
  assert.match(totals(output), /Total: {5}2\n {2}Passed: {4}1\n/);
});

test('a run whose hooks succeed passes, and prints what uvu prints', () => {
  const ours = run('pass\\.ts$');
  assert.is(ours.code, 0, ours.output);
  const uvus = run('pass\\.ts$', UVU);
  const steady = (output: string) => output.replace(/Duration:.*/, '');
  assert.is(steady(ours.output), steady(uvus.output));
  assert.match(totals(ours.output), /Total: {5}3\n {2}Passed: {4}3\n/);
});

test('a test that neither passed nor failed, with no hook to blame, is a failure', () => {
  const [errors] = reported([true, 1, 0, 3], [], 'file.ts › suite');
  assert.type(errors, 'string');
  assert.match(String(errors).replace(/\x1b\[[0-9;]*m/g, ''), /FAIL {2}file\.ts › suite {2}"2 of 3 tests not run"/);
  assert.equal(reported([true, 3, 1, 3], [], 'file.ts'), [true, 3, 1, 3]);
  assert.equal(reported(['  FAIL  a test\n', 0, 0, 1], [], 'file.ts'), ['  FAIL  a test\n', 0, 0, 1]);
});

// Two files at once, with coverage collected as c8 collects it: the tests below read the same run.
const coverage = join(scratch, 'coverage');
let both: Promise<Run> | undefined;
const twoFiles = () => (both ??= runFiles('[ab]-', ['--jobs', '2'], { NODE_V8_COVERAGE: coverage }));

test('each file runs in a process of its own: a global one file leaves is not there for the next', async () => {
  // The premise: in uvu's own command, one process, the second file sees the first one's global.
  const shared = spawnSync(process.execPath, ['--import', 'tsx', UVU, 'test/runFiles', '[ab]-'], {
    cwd: ROOT,
    env: childEnv(),
    encoding: 'utf8',
  });
  assert.is(shared.status, 1, shared.stdout);
  assert.match(plain(shared.stdout), /Expected values to be strictly equal/);

  const { code, output } = await twoFiles();
  assert.is(code, 0, output);
  assert.match(totals(output), /Total: {5}3\n {2}Passed: {4}3\n/);
});

test("a file's report is printed whole, each one once, and the slowest files are listed after them", async () => {
  const { output } = await twoFiles();
  // Run at once, each file's report still comes in one piece: its name, then its own suites.
  assert.match(output, /a-global\.ts\n• {3}\(1 \/ 1\)\n/);
  assert.match(output, /b-isolated\.ts\n isolated {2}• • {3}\(2 \/ 2\)\n/);
  assert.is(output.match(/^a-global\.ts\n/gm)?.length, 1);
  const summary = summaryOf(output);
  assert.match(
    summary,
    /Slowest 2 of 2 files \(2 at once; \d+\.\d s CPU in all\):\n(?: {4}[ \d]+\.\d s {2}[ \d]+\.\d s CPU {2}[ab]-\S+\.ts\n){2}/,
  );
  assert.not.match(summary, /Failed/);
});

test("coverage is collected from every file's process (c8 reads NODE_V8_COVERAGE's folder)", async () => {
  await twoFiles();
  const covered = new Set(
    readdirSync(coverage).flatMap((f) =>
      (JSON.parse(readFileSync(join(coverage, f), 'utf8')) as { result: { url: string }[] }).result.map((s) => s.url),
    ),
  );
  for (const file of ['a-global.ts', 'b-isolated.ts'])
    assert.ok(covered.has(pathToFileURL(join(ROOT, 'test', 'runFiles', file)).href), `no coverage of ${file}`);
});

test('a file that fails a test, ends its process before its report or stays up after its tests fails the run', async () => {
  const { code, output } = await runFiles('[cde]-', [], { RUN_LINGER_MS: '300' });
  assert.is(code, 1, output);
  // The failure in the file's report, the file in the summary.
  assert.match(
    output,
    /c-fails\.ts\n failing {2}• ✘ {3}\(1 \/ 2\)\n\n {3}FAIL {2}failing {2}"fails"\n {4}planted failure/,
  );
  const summary = summaryOf(output);
  assert.match(summary, /Failed: 3 of 3 files\n/);
  assert.match(summary, /\n {4}c-fails\.ts: 1 of 2 tests did not pass\n/);
  assert.match(summary, /\n {4}d-exits\.ts: ended \(exit code \d+\) before uvu's report of it was complete\n/);
  assert.match(summary, /\n {4}e-lingers\.ts: its tests passed, but its process ended with exit code 1\n/);
  assert.match(
    output,
    /e-lingers\.ts: its tests are over, yet its process was still up 0\.3 s later, held by: Timeout\n/,
  );
  assert.match(totals(output), /Total: {5}3\n {2}Passed: {4}2\n/);
});

test('--bail: no file starts after the first that fails; the longest files by the last durations start first', async () => {
  // By uvu's order c-fails.ts runs last; the durations recorded put it first.
  const durations = join(scratch, 'bail.json');
  writeFileSync(
    durations,
    JSON.stringify({
      'test/runFiles/c-fails.ts': 9000,
      'test/runFiles/a-global.ts': 10,
      'test/runFiles/b-isolated.ts': 10,
    }),
  );
  const { code, output } = await runFiles('[abc]-', ['--bail', '--jobs', '1'], { RUN_DURATIONS: durations });
  assert.is(code, 1, output);
  assert.ok(output.startsWith('c-fails.ts\n'), output);
  assert.not.match(output, /a-global|b-isolated/);
  assert.match(
    summaryOf(output),
    /Failed: 1 of 1 files\n {4}c-fails\.ts: [^\n]+\n\n {2}Not run \(--bail\): 2 of 3 files\n/,
  );
  // The run records the durations of the files it ran, for the next.
  const recorded = JSON.parse(readFileSync(durations, 'utf8')) as Record<string, number>;
  assert.equal(Object.keys(recorded).sort(), [
    'test/runFiles/a-global.ts',
    'test/runFiles/b-isolated.ts',
    'test/runFiles/c-fails.ts',
  ]);
  assert.is.not(recorded['test/runFiles/c-fails.ts'], 9000);
});

test("package.json's scripts run the tests through the project's runner, never through uvu's bin.js", () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  // npm test runs the test files (test:files) beside the type check, lint and format check.
  assert.is(scripts.test, 'node scripts/together.mjs typecheck lint format:check test:files');
  assert.match(scripts['test:files'], / node --import tsx test\/run\.ts test '/);
  assert.match(scripts['test:container'], /^node --import tsx test\/run\.ts test\/container '/);
  for (const [name, script] of Object.entries(scripts)) assert.not.match(script, /uvu\/bin|\buvu /, name);
});

test.run();
