import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../../src/lib/paths.js';
import { childEnv, consumerLock, ensureOk, failure, run, staleOutputs, type Finished } from './npm.js';

// The package as a user gets it: `npm pack` from this repository, installed into an empty project
// outside it with no network, then its CLI and its API used from ESM, TypeScript and CommonJS.

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
const work = mkdtempSync(join(tmpdir(), 'uam-package-'));
const consumer = join(work, 'consumer');
const installedDir = join(consumer, 'node_modules', pkg.name);
const npm = 'npm';
const KEY = 'sk-mock-default';
let tarball: { filename: string; integrity: string } | undefined;
let installed = false;
let typecheck: Promise<Finished> | undefined;

/** The checks after the install need it; without it they fail with a pointer to the real failure. */
function needInstall(): void {
  if (!installed) throw new Error('the package was not installed (see the install failure above)');
}

function existsIn(root: string, path: string): boolean {
  try {
    return statSync(join(root, path)).isFile();
  } catch {
    return false;
  }
}

test.after(() => rmSync(work, { recursive: true, force: true }));

test('npm pack ships the built code, its types and data, and nothing else', async () => {
  // UAM_PACK_PREBUILT: pack what dist/ holds instead of rebuilding the dist/ other tools run from (scripts/pack.mjs);
  // it is built here only when a source is newer (CI's `npm ci` has just built it through `prepare`).
  if (staleOutputs(ROOT).length > 0) ensureOk('npm run build', await run(npm, ['run', 'build'], { cwd: ROOT }));
  const manifest = readFileSync(join(ROOT, 'package.json'), 'utf8');
  const packed = ensureOk(
    'npm pack',
    await run(npm, ['pack', '--json', '--pack-destination', work], {
      cwd: ROOT,
      env: { ...childEnv(), UAM_PACK_PREBUILT: '1' },
    }),
  );
  // prepack took `prepare` out of the packed package.json; postpack put the repository's back byte for byte.
  assert.is(readFileSync(join(ROOT, 'package.json'), 'utf8'), manifest, 'package.json is as it was before npm pack');
  assert.not.ok(existsSync(join(ROOT, '.package.json.prepack')), 'the saved package.json is left behind');
  const [info] = JSON.parse(packed.stdout) as { filename: string; integrity: string; files: { path: string }[] }[];
  tarball = info;
  const files = info!.files.map((f) => f.path);
  const outside = files.filter(
    (f) =>
      !/^(dist\/.+\.(js|cjs|d\.ts)|dist\/inspector\/(index\.html|inspector\.css)|dist\/generated\/[\w.-]+\.json|schemas\/[\w.-]+\.json|fixtures\/[\w.-]+\.json|conformance\/[\w.-]+\.(json|md)|client-check\/[\w.-]+\.json|docs\/[\w.-]+\.md|README\.md|LICENSE|package\.json)$/.test(
        f,
      ),
  );
  assert.equal(
    outside,
    [],
    'files outside dist/*.js|cjs|d.ts, dist/generated/*.json, schemas, fixtures, conformance, client-check, README, package.json',
  );
  for (const needed of [
    'dist/cli/main.js',
    'dist/index.js',
    'docs/configuration.md',
    'docs/programmatic.md',
    'dist/index.d.ts',
    'dist/inspector/index.html',
    'dist/inspector/inspector.js',
    'schemas/chat-request.json',
    'fixtures/models.json',
    'conformance/suite.json',
    'client-check/rate-limited-429.json',
    'README.md',
  ])
    assert.ok(files.includes(needed), `${needed} is missing from the package`);
  // A built file whose source is gone would still be shipped and could still be imported.
  // dist/inspector/ is the request inspector's bundle (scripts/build-inspector.mjs), not compiled from src/.
  const compiled = files.filter(
    (f) => /^dist\/.+\.js$/.test(f) && !f.startsWith('dist/generated/') && !f.startsWith('dist/inspector/'),
  );
  const orphans = compiled.filter((f) => !existsIn(ROOT, f.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts')));
  assert.equal(orphans, [], 'dist/ holds output of deleted sources: delete dist/ and run npm run build');
  assert.ok(
    readFileSync(join(ROOT, 'dist/cli/main.js'), 'utf8').startsWith('#!/usr/bin/env node\n'),
    'dist/cli/main.js lost its shebang',
  );
});

test('npm ci --offline installs the tarball and its dependencies into an empty project', async () => {
  if (!tarball) throw new Error('npm pack failed (see the first failure)');
  // A fresh project that depends on the tarball, locked the way npm locks it, installed from the npm cache only.
  mkdirSync(consumer);
  const spec = `file:../${tarball.filename}`;
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify(
      { name: 'consumer', version: '9.9.9', private: true, type: 'module', dependencies: { [pkg.name]: spec } },
      null,
      2,
    ),
  );
  writeFileSync(
    join(consumer, 'package-lock.json'),
    JSON.stringify(consumerLock(ROOT, { spec, integrity: tarball.integrity }), null, 2),
  );
  const ci = await run(npm, ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: consumer });
  if (ci.code !== 0)
    throw new Error(
      `${failure('npm ci --offline in a fresh project', ci)}\n(ENOTCACHED means the npm cache lacks a dependency's tarball: run npm ci in the repository first)`,
    );
  // No warning: an install script to approve (a packed `prepare`), an engine the package's dependencies refuse, ...
  assert.equal(
    (ci.stdout + ci.stderr).split('\n').filter((l) => /\bwarn\b/i.test(l)),
    [],
    'npm warned while installing the tarball',
  );
  assert.equal(JSON.parse(readFileSync(join(installedDir, 'package.json'), 'utf8')).version, pkg.version);
  assert.ok(
    (statSync(join(installedDir, 'dist/cli/main.js')).mode & 0o111) !== 0,
    'the installed CLI is not executable',
  );
  installed = true;
  // Type-checking takes the longest; it runs beside the checks below.
  typecheck = typeCheck();
});

test('npm install of the tarball, as docs/programmatic.md says, installs without a warning and runs', async () => {
  if (!tarball) throw new Error('npm pack failed (see the first failure)');
  // A second project installed the plain way: no lock, the dependencies from the npm cache.
  const plain = join(work, 'plain');
  mkdirSync(plain);
  writeFileSync(join(plain, 'package.json'), JSON.stringify({ name: 'plain', version: '1.0.0', private: true }));
  const install = await run(
    npm,
    ['install', '--offline', '--no-audit', '--no-fund', '--save-dev', join(work, tarball.filename)],
    { cwd: plain },
  );
  ensureOk('npm install --offline <tarball>', install);
  // No warning: an install script to approve (a packed `prepare`), an engine a dependency refuses, ...
  assert.equal(
    (install.stdout + install.stderr).split('\n').filter((l) => /\bwarn/i.test(l)),
    [],
    failure('npm install printed a warning', install),
  );
  const r = ensureOk(
    'npx unified-ai-mock --version',
    await run('npx', ['--offline', pkg.name, '--version'], { cwd: plain }),
  );
  assert.is(r.stdout, `${pkg.version}\n`);
});

test('npx unified-ai-mock --version prints the package version, for every command', async () => {
  needInstall();
  for (const args of [['--version'], ['serve', '-v'], ['conformance', '--version']]) {
    const r = ensureOk(
      `npx unified-ai-mock ${args.join(' ')}`,
      // Not --no here: npx then takes the --version after the package's name for its own.
      await run('npx', ['--offline', pkg.name, ...args], { cwd: consumer }),
    );
    assert.is(r.stdout, `${pkg.version}\n`);
  }
});

test("docs/programmatic.md's startMockServer example runs in the project that installed the tarball", async () => {
  needInstall();
  // The example's one other import: the official openai package, as the repository has it (it needs nothing else).
  symlinkSync(join(ROOT, 'node_modules/openai'), join(consumer, 'node_modules/openai'), 'dir');
  const doc = readFileSync(join(ROOT, 'docs/programmatic.md'), 'utf8');
  const example = /## startMockServer\n\n<!-- run -->\n```ts\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(example, 'docs/programmatic.md has no startMockServer example');
  writeFileSync(join(consumer, 'example.mjs'), example);
  const { FORCE_COLOR: _colour, ...env } = childEnv();
  const r = ensureOk(
    'node example.mjs',
    await run(process.execPath, ['example.mjs'], { cwd: consumer, env: { ...env, NO_COLOR: '1' } }),
  );
  assert.is(r.stdout, '[ 429, 200 ]\nsk-mock-limited\n');
});

test('npx unified-ai-mock conformance --help prints its usage', async () => {
  needInstall();
  // --offline --no: a package missing from the project fails here instead of being fetched.
  const r = ensureOk(
    'npx unified-ai-mock conformance --help',
    await run('npx', ['--offline', '--no', pkg.name, 'conformance', '--help'], { cwd: consumer }),
  );
  assert.match(r.stdout, /^Usage: unified-ai-mock conformance --base-url URL --api-key KEY/);
});

test('npx unified-ai-mock client-check --list finds the scenarios in the installed package', async () => {
  needInstall();
  const r = ensureOk(
    'npx unified-ai-mock client-check --list',
    await run('npx', ['--offline', '--no', pkg.name, 'client-check', '--list', '--scenario', 'rate-limited-429'], {
      cwd: consumer,
    }),
  );
  assert.match(r.stdout, /^rate-limited-429 {2}\[retry\]/);
});

interface Served {
  readonly url: string;
  readonly key: string;
  /** Sends SIGTERM; resolves to how the server ended and everything it printed. */
  stop(): Promise<Finished>;
}

/** Starts the installed bin on a free port; resolves once it prints its URL and first key. */
async function serveInstalled(): Promise<Served> {
  const server = spawn(join(consumer, 'node_modules/.bin/unified-ai-mock'), ['serve', '--port', '0'], {
    cwd: consumer,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
    killSignal: 'SIGKILL', // a hang fails, not blocks
  });
  let stdout = '';
  let stderr = '';
  server.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  // 'close' also follows a failed spawn ('error'), so a missing bin fails the test instead of the process.
  const closed = new Promise<Finished>((resolve) =>
    server.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  server.on('error', (err) => (stderr += `${err.message}\n`));
  const [, url, key] = await new Promise<string[]>((resolve, reject) => {
    server.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      const m = /listening on (http:\/\/\S+)\nAPI keys:\n {2}(\S+)/.exec(stdout);
      if (m) resolve([...m]);
    });
    void closed.then((r) => reject(new Error(failure('unified-ai-mock serve', r))));
  });
  return { url: url!, key: key!, stop: () => (server.kill('SIGTERM'), closed) };
}

test('the installed bin serves the API from the installed files and stops on SIGTERM with exit code 0', async () => {
  needInstall();
  const served = await serveInstalled();
  let end: Finished;
  try {
    assert.is(served.key, KEY);
    const me = await fetch(`${served.url}/v1/me`, { headers: { authorization: `Bearer ${served.key}` } });
    assert.is(me.status, 200);
    assert.is(((await me.json()) as { object: string }).object, 'api_key');
    const health = await fetch(`${served.url}/__health`);
    assert.equal([health.status, await health.json()], [200, { status: 'ok', log: { dropped: 0 } }]);
    // Built from schemas/, fixtures/ and package.json: it finds the installed package's own files.
    const openapi = (await (await fetch(`${served.url}/openapi.json`)).json()) as { info: { version: string } };
    assert.is(openapi.info.version, pkg.version);
  } finally {
    end = await served.stop();
  }
  assert.equal({ code: end.code, signal: end.signal }, { code: 0, signal: null }, failure('serve after SIGTERM', end));
});

test('npx unified-ai-mock conformance runs the suite against the installed server', async () => {
  needInstall();
  const served = await serveInstalled();
  try {
    const args = [
      '--offline',
      '--no',
      pkg.name,
      'conformance',
      '--base-url',
      served.url,
      '--api-key',
      served.key,
      '--only',
      'me',
      '--reporter',
      'json',
    ];
    const suite = ensureOk('npx unified-ai-mock conformance --only me', await run('npx', args, { cwd: consumer }));
    const { summary } = JSON.parse(suite.stdout) as { summary: { total: number; passed: number } };
    assert.ok(summary.total > 0 && summary.passed === summary.total, failure('conformance', suite));
  } finally {
    await served.stop();
  }
});

test('an ES module imports the API, starts a mock, calls it and closes it', async () => {
  needInstall();
  writeFileSync(
    join(consumer, 'esm.mjs'),
    `import { startMockServer } from '${pkg.name}';
const mock = await startMockServer();
const res = await fetch(mock.url + '/text-provider/chat/completions', {
  method: 'POST',
  headers: { authorization: 'Bearer ' + mock.apiKey, 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Say this is a test' }] }),
});
const body = await res.json();
await mock.close();
if (res.status !== 200 || typeof body.choices[0].message.content !== 'string') throw new Error(JSON.stringify(body));
console.log(\`esm ok \${body.usage.total_tokens}\`);
`,
  );
  const r = ensureOk('node esm.mjs', await run(process.execPath, ['esm.mjs'], { cwd: consumer }));
  assert.match(r.stdout, /^esm ok \d+/m, failure('node esm.mjs', r));
});

const TS_APP = `import { startMockServer, type MockServer, type MockServerOptions } from '${pkg.name}';

const options: MockServerOptions = { clock: 1767225600 };
// @ts-expect-error the published types say a port is a number (were they missing, this line would not be an error)
const wrong: MockServerOptions = { port: 'eighty' };
void wrong;
const mock: MockServer = await startMockServer(options);
const res = await fetch(\`\${mock.url}/v1/me\`, { headers: { authorization: \`Bearer \${mock.apiKey}\` } });
const me = (await res.json()) as { object: string };
const port: number = mock.port;
await mock.close();
console.log(\`ts ok \${res.status} \${me.object} \${port > 0}\`);
`;

// strict, NodeNext and no skipLibCheck: the package's .d.ts files and the types they import must all resolve.
const TS_CONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    types: ['node'],
  },
  files: ['app.ts'],
};

function typeCheck(): Promise<Finished> {
  writeFileSync(join(consumer, 'app.ts'), TS_APP);
  writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify(TS_CONFIG, null, 2));
  return run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], {
    cwd: consumer,
  });
}

test('a TypeScript file type-checks against the published types and runs', async () => {
  needInstall();
  ensureOk('tsc --noEmit in the fresh project', await typecheck!);
  const tsx = pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('tsx')).href;
  const r = ensureOk(
    'node --import tsx app.ts',
    await run(process.execPath, ['--import', tsx, 'app.ts'], { cwd: consumer }),
  );
  assert.match(r.stdout, /^ts ok 200 api_key true/m, failure('node --import tsx app.ts', r));
});

// The package is ESM only: Node.js 20.19, 22.12 and later can require() it; older releases refuse with ERR_REQUIRE_ESM.
const requireEsm = (process.features as { require_module?: boolean }).require_module === true;

test(`require() from CommonJS ${requireEsm ? 'loads the package' : 'fails with ERR_REQUIRE_ESM'}`, async () => {
  needInstall();
  writeFileSync(
    join(consumer, 'cjs.cjs'),
    `const { startMockServer } = require('${pkg.name}');
startMockServer().then(async (mock) => { await mock.close(); console.log(\`cjs ok \${typeof mock.url}\`); });
`,
  );
  const r = await run(process.execPath, ['cjs.cjs'], { cwd: consumer });
  if (requireEsm) assert.match(ensureOk('node cjs.cjs', r).stdout, /^cjs ok string/m, failure('node cjs.cjs', r));
  else assert.match(r.stderr, /ERR_REQUIRE_ESM/, failure('node cjs.cjs', r));
});

test.run();
