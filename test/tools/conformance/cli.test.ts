import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cli as command } from '../../support/child.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const CLI = command({ CONFORMANCE_API_KEY: '' });
const cli = (...args: string[]) =>
  spawnSync(process.execPath, [...CLI.args, ...args], { cwd: ROOT, encoding: 'utf8', env: CLI.env });

test('unified-ai-mock conformance: the command is wired into the CLI (plan, usage error, help)', () => {
  const plan = cli('conformance', '--plan', '--only', 'me');
  assert.is(plan.status, 0, plan.stderr);
  assert.match(plan.stdout, /Plan \(documented profile\): 31 cases, 31 free, 0 billable/);
  const bad = cli('conformance', '--base-url', 'http://127.0.0.1:9');
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /--api-key \(or CONFORMANCE_API_KEY\) is required/);
  const help = cli('--help');
  assert.match(help.stdout, /conformance {3}check an implementation of the API against the conformance suite/);
});

test('output piped to another program arrives whole, past the 64 KiB a pipe takes at once', () => {
  const plan = cli('conformance', '--plan', '--profile', 'full');
  assert.is(plan.status, 0, plan.stderr);
  assert.ok(plan.stdout.length > 65_536, `${plan.stdout.length} bytes`);
  assert.match(plan.stdout, /Nothing was sent\.\n$/);
});

test.run();
