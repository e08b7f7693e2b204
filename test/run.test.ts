// The project's test runner (test/run.ts), run as a child on the suites of test/hookSuites: a suite whose before,
// after or after.each hook throws fails the run, printed with its suite and the hook's error, where uvu's own command
// passes such a run in silence; a run whose hooks succeed prints what uvu's own command prints.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../src/lib/paths.js';
import { childEnv } from './support/index.js';
import { reported } from './support/uvu.js';

interface Run {
  readonly code: number | null;
  readonly output: string;
}

/** Runs the files of test/hookSuites whose path matches pattern with a runner (the project's by default); resolves
 * with its exit code and its output, colours removed. */
function run(pattern: string, runner = 'test/run.ts'): Run {
  const out = spawnSync(process.execPath, ['--import', 'tsx', runner, 'test/hookSuites', pattern], {
    cwd: ROOT,
    env: childEnv(),
    encoding: 'utf8',
  });
  return { code: out.status, output: `${out.stdout}${out.stderr}`.replace(/\x1b\[[0-9;]*m/g, '') };
}

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

test("package.json's scripts run the tests through the project's runner, never through uvu's bin.js", () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  assert.match(scripts.test, / node --import tsx test\/run\.ts test '/);
  assert.match(scripts['test:container'], /^node --import tsx test\/run\.ts test\/container '/);
  for (const [name, script] of Object.entries(scripts)) assert.not.match(script, /uvu\/bin|\buvu /, name);
});

test.run();
