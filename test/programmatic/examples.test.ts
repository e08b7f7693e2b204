// The examples/ folder (quoted in docs/programmatic.md), run by their own test runners against the built package
// (dist/), as a user runs them.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../../src/lib/paths.js';

const bin = (path: string) => join(ROOT, 'node_modules', path);
const dist = join(ROOT, 'dist', 'index.js');

interface Run {
  readonly code: number | null;
  readonly output: string;
}

/** Runs a command from the package root; resolves with its exit code and its output, colours removed. */
function run(args: readonly string[]): Promise<Run> {
  // Coverage is collected for src/ only: the children run dist/, and writing their coverage costs time.
  // uvu sets FORCE_COLOR, which Node.js 22 and later warn about when NO_COLOR is set as well.
  const { NODE_V8_COVERAGE: _, FORCE_COLOR: __, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd: ROOT, env: { ...env, CI: '1', NO_COLOR: '1' }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        resolve({ code, output: `${stdout}\n${stderr}`.replace(/\x1b\[[0-9;]*m/g, '') });
      },
    );
  });
}

/** `examples/node-test/*.test.mjs` expanded, as the shell does for the example's own command. */
const nodeTestFiles = readdirSync(join(ROOT, 'examples', 'node-test'))
  .filter((f) => f.endsWith('.test.mjs'))
  .sort()
  .map((f) => `examples/node-test/${f}`);

const runners = {
  uvu: ['node_modules/uvu/bin.js', 'examples/uvu'],
  // Files, not the folder: Node.js 22 and later read a folder given to --test as a module to run, and fail.
  'node:test': ['--test', ...nodeTestFiles],
  vitest: ['node_modules/vitest/vitest.mjs', 'run', '--root', 'examples/vitest'],
  jest: ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', '--config', 'examples/jest/jest.config.mjs'],
  // The Vitest example (its configuration too) and a consumer file that expects type errors, checked against the
  // shipped declarations (dist/*.d.ts).
  tsc: [
    bin('typescript/bin/tsc'),
    '--noEmit',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--target',
    'es2022',
    '--strict',
    '--skipLibCheck',
    '--types',
    'node',
    'examples/vitest/chat.test.ts',
    'examples/vitest/vitest.config.ts',
    'test/programmatic/fixtures/consumer.ts',
  ],
} as const;

// Started together, so the runners' start-up costs overlap; each test awaits its own.
let runs: Record<keyof typeof runners, Promise<Run>> | undefined;
test.before(() => {
  if (!existsSync(dist)) return;
  runs = Object.fromEntries(Object.entries(runners).map(([name, args]) => [name, run(args)])) as typeof runs;
});

/** The run of one runner; fails with what to do when the package is not built. */
async function result(name: keyof typeof runners): Promise<Run> {
  assert.ok(
    runs,
    `${dist} is missing: the examples import the built package. Run \`npm run build\` (npm ci runs it as \`prepare\`).`,
  );
  const outcome = await runs[name];
  assert.is(outcome.code, 0, `${name} exited with ${outcome.code}:\n${outcome.output}`);
  return outcome;
}

test('uvu: the example passes its 4 tests', async () => {
  const { output } = await result('uvu');
  assert.match(output, /Passed:\s+4\b/, output);
  assert.match(output, /Total:\s+4\b/, output);
});

test('node:test: the example passes its 4 tests', async () => {
  const { output } = await result('node:test');
  // Without a terminal, Node.js 20 and 22 report in TAP (`# pass 4`), 24 and 26 with the spec reporter (`ℹ pass 4`).
  assert.match(output, /^[#ℹ] pass 4$/m, output);
  assert.match(output, /^[#ℹ] fail 0$/m, output);
});

test('Vitest: the TypeScript example passes its 4 tests', async () => {
  const { output } = await result('vitest');
  assert.match(output, /Tests\s+4 passed \(4\)/, output);
});

test('Jest (native ES modules): the example passes its 4 tests', async () => {
  const { output } = await result('jest');
  assert.match(output, /Tests:\s+4 passed, 4 total/, output);
});

test('the TypeScript example and the consumer check type-check against the published declarations', async () => {
  const { output } = await result('tsc');
  assert.is(output.trim(), '');
});

test.run();
