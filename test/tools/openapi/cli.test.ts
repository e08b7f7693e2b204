import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { main } from '../../../src/cli/main.js';
import { DEFAULT_SERVER_URL, openApiText } from '../../../src/tools/openapi/index.js';
import { packageLimits } from '../../../src/domain/limits.js';
import { cli } from '../../support/child.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** Runs main() with stdout and stderr captured. */
async function runMain(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  const realOut = process.stdout.write.bind(process.stdout);
  const realErr = process.stderr.write.bind(process.stderr);
  const capture = (key: 'stdout' | 'stderr') =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      out[key] += String(chunk);
      const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      done?.();
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = capture('stdout');
  process.stderr.write = capture('stderr');
  try {
    return { code: await main(argv), ...out };
  } finally {
    process.stdout.write = realOut;
    process.stderr.write = realErr;
  }
}

test('`unified-ai-mock openapi` prints the document with the default server and exits 0', async () => {
  const { code, stdout, stderr } = await runMain(['openapi']);
  assert.is(code, 0);
  assert.is(stderr, '');
  assert.is(stdout, openApiText(DEFAULT_SERVER_URL, packageLimits()));
  assert.equal(
    JSON.parse(stdout).servers.map((s: { url: string }) => s.url),
    ['http://127.0.0.1:4010'],
  );
});

test('--server-url names another server (a trailing slash dropped); nothing else changes', async () => {
  const { code, stdout } = await runMain(['openapi', '--server-url', 'https://mock.example/base/']);
  assert.is(code, 0);
  const doc = JSON.parse(stdout);
  assert.equal(
    doc.servers.map((s: { url: string }) => s.url),
    ['https://mock.example/base'],
  );
  assert.equal(
    { ...doc, servers: [] },
    { ...JSON.parse(openApiText(DEFAULT_SERVER_URL, packageLimits())), servers: [] },
  );
});

test('--help describes the command; the main help lists it', async () => {
  const help = await runMain(['openapi', '--help']);
  assert.is(help.code, 0);
  assert.match(help.stdout, /Usage: unified-ai-mock openapi \[--server-url URL\]/);
  assert.match((await runMain(['--help'])).stdout, /\n {2}openapi {7}print the OpenAPI 3\.1 document/);
});

test('a bad --server-url or an unknown flag is a usage error: exit 2 and a message', async () => {
  const bad = await runMain(['openapi', '--server-url', 'ftp://x']);
  assert.is(bad.code, 2);
  assert.is(bad.stdout, '');
  assert.match(bad.stderr, /--server-url must be an http\(s\) URL, got 'ftp:\/\/x'/);
  const unknown = await runMain(['openapi', '--yaml']);
  assert.is(unknown.code, 2);
  assert.match(unknown.stderr, /--yaml/);
});

test('the program writes the whole document through a pipe before it exits', async () => {
  const { args, env } = cli();
  const child = spawn(process.execPath, [...args, 'openapi'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  assert.is(code, 0, stderr);
  assert.is(stdout, openApiText(DEFAULT_SERVER_URL, packageLimits()));
});

test.run();
