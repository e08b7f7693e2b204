// The reporter plumbing the conformance runner and client-check share: which reporters a command line
// asks for (--reporter NAME [--output FILE]), and how their text reaches standard output and files.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UsageError } from '../../src/verdict/commandLine.js';
import { openReporters, reporterChoices, type Reporter } from '../../src/verdict/reporterChoice.js';

const NAMES = ['pretty', 'json', 'junit'] as const;
const choices = (argv: string[]) =>
  reporterChoices(
    parseArgs({
      args: argv,
      strict: true,
      tokens: true,
      options: { reporter: { type: 'string', multiple: true }, output: { type: 'string', multiple: true } },
    }).tokens,
    NAMES,
  );

/** The usage error a command line raises, or undefined. */
function usage(argv: string[]): string | undefined {
  try {
    choices(argv);
    return undefined;
  } catch (err) {
    assert.instance(err, UsageError);
    return (err as Error).message;
  }
}

test('reporter choices: pretty on standard output by default; --output binds to the reporter just before it', () => {
  assert.equal(choices([]), [{ name: 'pretty' }]);
  assert.equal(choices(['--reporter', 'json']), [{ name: 'json' }]);
  assert.equal(choices(['--reporter', 'json', '--output', 'r.json', '--reporter', 'junit']), [
    { name: 'json', output: 'r.json' },
    { name: 'junit' },
  ]);
  assert.equal(choices(['--reporter', 'junit', '--output', 'j.xml', '--reporter', 'json', '--output', 'r.json']), [
    { name: 'pretty' },
    { name: 'junit', output: 'j.xml' },
    { name: 'json', output: 'r.json' },
  ]);
});

test('reporter choices: the usage errors', () => {
  assert.is(usage(['--output', 'r.json']), '--output must follow the --reporter it is for');
  assert.is(usage(['--output', 'r.json', '--reporter', 'json']), '--output must follow the --reporter it is for');
  assert.is(
    usage(['--reporter', 'json', '--output', 'a.json', '--output', 'b.json']),
    '--output must follow the --reporter it is for',
  );
  assert.is(
    usage(['--reporter', 'json', '--reporter', 'junit']),
    'only one reporter can write to standard output; give the others an --output FILE',
  );
  assert.is(
    usage(['--reporter', 'pretty', '--reporter', 'json', '--output', 'r.json', '--reporter', 'junit']),
    'only one reporter can write to standard output; give the others an --output FILE',
  );
  assert.is(usage(['--reporter', 'tap']), "--reporter must be one of pretty, json, junit, got 'tap'");
  assert.is(
    usage(['--reporter', 'toString']),
    "--reporter must be one of pretty, json, junit, got 'toString'",
    'a name is looked up in the list, not in an object',
  );
});

/** A reporter that writes what it is told as it happens, and its name at the end. */
const echo =
  (name: string) =>
  (write: (text: string) => void): Reporter<string, number, { failed: number }> => ({
    start: (info) => write(`${name} start ${info}\n`),
    result: (r, done, total) => write(`${name} ${r} ${done}/${total}\n`),
    end: (run) => `${name} end ${run.summary.failed}\n`,
  });
const MAKE = { pretty: echo('pretty'), json: echo('json'), junit: () => ({ end: () => '<secret/>\n' }) };

test('open reporters: standard output as it happens, files only at the end (their folders made), text as made, the exit code', () => {
  const dir = mkdtempSync(join(tmpdir(), 'reporting-'));
  try {
    const json = join(dir, 'deep', 'er', 'r.json');
    const junit = join(dir, 'j.xml');
    let stdout = '';
    const reporters = openReporters(
      [{ name: 'pretty' }, { name: 'json', output: json }, { name: 'junit', output: junit }],
      MAKE,
      (t) => void (stdout += t),
    );
    reporters.start('run');
    reporters.result(7, 1, 1);
    assert.is(stdout, 'pretty start run\npretty 7 1/1\n');
    assert.not.ok(existsSync(json) || existsSync(junit), 'no file before the end');
    assert.is(reporters.finish({ info: 'run', results: [7], summary: { failed: 0 } }), 0);
    assert.is(stdout, 'pretty start run\npretty 7 1/1\npretty end 0\n');
    assert.is(readFileSync(json, 'utf8'), 'json start run\njson 7 1/1\njson end 0\n');
    assert.is(readFileSync(junit, 'utf8'), '<secret/>\n', 'the text is written as the reporter made it');
    assert.is(
      openReporters([{ name: 'pretty' }], MAKE, () => {}).finish({ info: 'run', results: [], summary: { failed: 2 } }),
      1,
      'a failure exits 1',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
