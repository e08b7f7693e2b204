// The container image, built from the Dockerfile and run with podman: the server on a published port,
// keys, a non-root user, a read-only root filesystem, the conformance runner as the image's command,
// SIGTERM, the HEALTHCHECK, and two instances sharing rate limits in Redis (compose.yaml's topology).
// Run once per CI run, not per Node.js line: `npm run test:container` (its name does not end in
// .test.ts, so `npm test` leaves it out). CI sources .ci/podman-env first; by hand on a machine like
// CI's, do the same: `. .ci/podman-env && npm run test:container`.
// The base image is NODE_IMAGE (default node:24-alpine). node:24-alpine missing from podman's store
// (CI reaches no image registry) is built as a stand-in by .ci/node-standin (see docs/configuration.md);
// any other missing base is pulled.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../../src/lib/paths.js';
import { get, KEY } from '../support/index.js';
import { ensureOk, failure, run, type Finished } from '../package/npm.js';
import { findRedisServer, TestRedis } from '../state/redisServer.js';

const IMAGE = process.env.UAM_TEST_IMAGE ?? 'localhost/unified-ai-mock:test';
const BASE = process.env.NODE_IMAGE ?? 'node:24-alpine';
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
/** Loopback ports of this test (4340-4359): published ports, then the host-network instances. */
const PORT = { main: 4340, target: 4341, shared: [4342, 4343] } as const;
const NAME = {
  main: 'uam-test-main',
  target: 'uam-test-target',
  shared: ['uam-test-shared-1', 'uam-test-shared-2'],
} as const;
const LIMITED = 'sk-container-five-per-minute';

const podman = (args: string[], timeoutMs = 120_000): Promise<Finished> => run('podman', args, { timeoutMs });
const podmanOk = async (args: string[], timeoutMs?: number): Promise<string> =>
  ensureOk(`podman ${args.join(' ')}`, await podman(args, timeoutMs)).stdout.trim();

/** The server's health route, polled until it answers 200 (a start on a busy 2-core machine takes seconds). */
async function healthy(url: string, name: string): Promise<unknown> {
  for (let attempt = 0; attempt < 120; attempt++) {
    // Each try bounded: a published port whose forwarding is broken drops packets rather than refusing.
    const res = await fetch(`${url}/__health`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
    if (res?.status === 200) return await res.json();
    await delay(500);
  }
  const logs = await podman(['logs', name]);
  throw new Error(`${name} never answered /__health on ${url}\n${logs.stdout}${logs.stderr}`);
}

/** Starts a detached container of the image; `args` go before the image, `command` after it. */
async function start(name: string, args: string[], command: string[] = []): Promise<void> {
  await podman(['rm', '-f', '-t', '0', name]);
  await podmanOk(['run', '-d', '--name', name, ...args, IMAGE, ...command]);
}

/** NODE_IMAGE in podman's store, pulled, or (node:24-alpine only) the stand-in built under that name. */
async function ensureBase(): Promise<void> {
  if ((await podman(['image', 'exists', BASE])).code === 0) return;
  // The stand-in is Node.js 24: any other base is pulled, never faked.
  if (BASE !== 'node:24-alpine') {
    await podmanOk(['pull', BASE], 600_000);
    return;
  }
  console.log(`${BASE} is not in podman's store: building the stand-in (.ci/node-standin)`);
  ensureOk('.ci/node-standin', await run(join(ROOT, '.ci/node-standin'), [BASE], { cwd: ROOT, timeoutMs: 600_000 }));
}

/** The build, as a user behind a TLS-inspecting proxy runs it: npm trusts the host's CA bundle. */
async function build(): Promise<void> {
  const ca = ['-v', `${CA_BUNDLE}:${CA_BUNDLE}:ro`, '--build-arg', `NPM_CONFIG_CAFILE=${CA_BUNDLE}`];
  const started = Date.now();
  await podmanOk(
    ['build', '--format', 'docker', '--pull=never', '--build-arg', `NODE_IMAGE=${BASE}`, ...ca, '-t', IMAGE, ROOT],
    900_000,
  );
  console.log(`built ${IMAGE} from ${BASE} in ${Math.round((Date.now() - started) / 1000)} s`);
}

const image = suite('the container image');

image.before(async () => {
  await ensureBase();
  await build();
  await start(NAME.main, ['--read-only', '-p', `127.0.0.1:${PORT.main}:4010`]);
});

image.after(async () => {
  await podman(['rm', '-f', '-t', '0', NAME.main, NAME.target]);
});

const main = `http://127.0.0.1:${PORT.main}`;

image('the server answers on the published port, with a read-only root filesystem, and /__health is ok', async () => {
  assert.is(await podmanOk(['inspect', NAME.main, '--format', '{{.HostConfig.ReadonlyRootfs}}']), 'true');
  assert.equal(await healthy(main, NAME.main), { status: 'ok', log: { dropped: 0 } });
});

image('a key of fixtures/keys.json gets /v1/me; a wrong key is a 401', async () => {
  const me = await get(main, '/v1/me', KEY);
  assert.is(me.status, 200, me.text);
  assert.is((me.json as { name?: string }).name, 'default');
  assert.is((await get(main, '/v1/me', 'sk-not-a-key')).status, 401);
});

image('the server runs as the unprivileged node user', async () => {
  assert.is(await podmanOk(['exec', NAME.main, 'id', '-u']), '1000');
  // The server process itself, as the host sees it: not root.
  const users = (await podmanOk(['top', NAME.main, 'user', 'args'])).split('\n').slice(1);
  const server = users.find((l) => l.includes('dist/cli/main.js'));
  assert.ok(server, users.join('\n'));
  assert.not.ok(/^\s*root\b/.test(server!), server);
});

image('the image has a HEALTHCHECK on /__health, and it passes in the running container', async () => {
  const check = JSON.parse(await podmanOk(['image', 'inspect', IMAGE, '--format', '{{json .HealthCheck}}'])) as {
    Test?: string[];
  } | null;
  assert.ok(check?.Test?.join(' ').includes('/__health'), JSON.stringify(check));
  const run = await podman(['healthcheck', 'run', NAME.main]);
  assert.is(run.code, 0, failure('podman healthcheck run', run));
});

image(
  '`IMAGE conformance --base-url ...` runs the suite against a second container of the image, and it passes',
  async () => {
    await start(NAME.target, ['--read-only', '-p', `127.0.0.1:${PORT.target}:4010`]);
    const target = `http://127.0.0.1:${PORT.target}`;
    await healthy(target, NAME.target);
    const result = await podman(
      ['run', '--rm', '--read-only', '--network', 'host', IMAGE, 'conformance', '--base-url', target, '--api-key', KEY],
      600_000,
    );
    assert.is(result.code, 0, failure('the conformance run', result));
    const counts = /^(\d+) passed, (\d+) failed\b/m.exec(result.stdout);
    assert.ok(counts && Number(counts[1]) > 0 && counts[2] === '0', result.stdout.slice(-2000));
  },
);

image('SIGTERM stops the server cleanly: exit code 0 within the 5 s podman stop gives before SIGKILL', async () => {
  await podmanOk(['stop', '-t', '5', NAME.main]);
  const [code, oomOrKilled] = (
    await podmanOk(['inspect', NAME.main, '--format', '{{.State.ExitCode}} {{.State.OOMKilled}}'])
  ).split(' ');
  assert.is(code, '0', 'a SIGKILL after the grace period would be 137');
  assert.is(oomOrKilled, 'false');
  const logs = await podman(['logs', NAME.main]);
  assert.match(logs.stdout + logs.stderr, /"signal":"SIGTERM".*"msg":"shutting down"/);
});

const shared = suite('two containers sharing state in Redis (compose.yaml)');
const redisBin = findRedisServer();
let redis: TestRedis | undefined;
let configDir: string;

shared.before(async () => {
  if (!redisBin) return;
  redis = await TestRedis.create(redisBin);
  configDir = mkdtempSync(join(tmpdir(), 'uam-container-'));
  const config = join(configDir, 'mock.json');
  writeFileSync(
    config,
    JSON.stringify({
      keys: [
        { key: KEY, label: 'default' },
        { key: LIMITED, label: 'limited', rateLimit: { requests: 5, windowMs: 60_000 } },
      ],
      adminToken: 'container-test-admin-token',
    }),
  );
  for (const [i, name] of NAME.shared.entries()) {
    const args = ['--read-only', '--network', 'host', '-v', `${config}:/config/mock.json:ro`];
    await start(name, args, [
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      String(PORT.shared[i]),
      '--config',
      '/config/mock.json',
      '--state',
      redis.url,
    ]);
  }
});

shared.after(async () => {
  await podman(['rm', '-f', '-t', '0', ...NAME.shared]);
  await redis?.dispose();
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

shared(
  'a key with a limit of 5 per minute gets exactly 5 of 20 concurrent requests spread over both instances',
  async () => {
    if (!redis) {
      console.warn(
        '\n!!! SKIPPED the shared-state check of test/container/image.ts: redis-server is not on PATH. Install it: apt-get install -y redis-server\n',
      );
      return;
    }
    const urls = PORT.shared.map((p) => `http://127.0.0.1:${p}`);
    for (const [i, url] of urls.entries()) {
      const health = (await healthy(url, NAME.shared[i]!)) as { status: string; state: string };
      assert.equal([health.status, health.state], ['ok', 'redis']);
    }
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => get(urls[i % 2]!, '/v1/me', LIMITED)));
    const statuses = results.map((r) => r.status);
    assert.is(statuses.filter((s) => s === 200).length, 5, statuses.join(','));
    assert.is(statuses.filter((s) => s === 429).length, 15, statuses.join(','));
    assert.ok(
      urls.every((_, i) => results.some((r, j) => j % 2 === i && r.status === 429)),
      'both instances refuse',
    );
  },
);

if ((await run('sh', ['-c', 'command -v podman'])).code !== 0) {
  console.warn(
    '\n!!! SKIPPED test/container/image.ts: podman is not on PATH, so the container image (build, run, read-only root, SIGTERM, HEALTHCHECK, conformance, shared Redis) was NOT tested. Install it: apt-get install -y podman runc busybox-static\n',
  );
} else {
  image.run();
  shared.run();
}
