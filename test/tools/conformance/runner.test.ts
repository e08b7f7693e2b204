import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { brokenServer, closeSharedMock, runCli, runJson, sharedMock } from './harness.js';

const test = suite('conformance runner: verdicts, retries, applicability, exit codes');

test.after(closeSharedMock);

const key = (m: { url: string }) => ['--base-url', m.url, '--api-key', 'sk-mock-default'];

test('a 429 on a free case is retried after retry-after and then passes; a paid case is not retried', async () => {
  const seen = new Set<string>();
  const server = await brokenServer({
    response: (res, req) => {
      const id = `${req.method} ${req.path} ${JSON.stringify(req.json)} ${req.headers.authorization}`;
      if (req.path === '/v1/me' || seen.has(id)) return;
      seen.add(id);
      res.status = 429;
      res.headers['retry-after'] = '0';
    },
  });
  try {
    const { code, report } = await runJson(server.url, ['--only', 'chat.temperature']);
    const free = report.cases.filter((c) => !c.billable);
    const paid = report.cases.filter((c) => c.billable);
    assert.ok(free.length === 8 && paid.length === 3, `${free.length} free, ${paid.length} paid`);
    assert.equal(
      free.map((c) => `${c.verdict} ${c.attempts}`),
      free.map(() => 'pass 2'),
    );
    assert.ok(paid.every((c) => c.verdict === 'inconclusive' && c.attempts === 1 && /not retried/.test(c.reason!)));
    assert.is(code, 0, 'inconclusive does not fail the run');
  } finally {
    await server.close();
  }
});

test('a target that keeps answering 429 makes free cases inconclusive after the retry bound', async () => {
  const server = await brokenServer({
    response: (res, req) => void (req.path !== '/v1/me' && ((res.status = 429), (res.headers['retry-after'] = '0'))),
  });
  try {
    const { code, report } = await runJson(server.url, ['--only', 'chat.top_p.above-maximum', '--retries', '1']);
    assert.is(report.cases[0]!.verdict, 'inconclusive');
    assert.is(report.cases[0]!.attempts, 2);
    assert.match(report.cases[0]!.reason!, /429/);
    assert.is(code, 0);
  } finally {
    await server.close();
  }
});

test('a retry-after longer than the runner waits is inconclusive at once', async () => {
  const server = await brokenServer({
    response: (res, req) => void (req.path !== '/v1/me' && ((res.status = 429), (res.headers['retry-after'] = '3600'))),
  });
  try {
    const { report } = await runJson(server.url, ['--only', 'auth.missing.chat']);
    assert.is(report.cases[0]!.attempts, 1);
    assert.match(report.cases[0]!.reason!, /3600 s/);
  } finally {
    await server.close();
  }
});

test('dropped connections are inconclusive; a 503 where a 401 belongs is a failure', async () => {
  const server = createServer((req, res) => {
    if (req.url === '/v1/me') return void res.writeHead(200).end('{}');
    if (req.url!.includes('chat')) return void req.socket.destroy();
    res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { code, report } = await runJson(url, ['--only', 'auth.missing.chat,auth.missing.tts', '--retries', '0']);
    assert.is(code, 1);
    const chat = report.cases.find((c) => c.id === 'auth.missing.chat')!;
    assert.is(chat.verdict, 'inconclusive');
    assert.match(chat.reason!, /transport error/);
    assert.equal(report.cases.find((c) => c.id === 'auth.missing.tts')!.failures[0], {
      check: 'status',
      expected: 'status 401',
      actual: 'status 503',
    });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('an unreachable target exits 2 without running anything', async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  const out = await runCli(['--base-url', `http://127.0.0.1:${port}`, '--api-key', 'sk-x', '--timeout', '2000']);
  assert.is(out.code, 2);
  assert.match(out.stderr, /cannot reach/);
  assert.is(out.stdout, '');
});

test('a key the target refuses stops the run at the probe: exit 2, one line, no case sent, no report', async () => {
  const mock = await sharedMock();
  const before = (await (await fetch(`${mock.url}/__admin/requests`)).json()) as { data: unknown[] };
  const out = await runCli(['--base-url', mock.url, '--api-key', 'sk-not-a-key-of-the-mock', '--only', 'me']);
  assert.is(out.code, 2);
  assert.is(out.stdout, '');
  assert.is(out.stderr.split('\n').filter(Boolean).length, 1, out.stderr);
  assert.match(
    out.stderr,
    /^unified-ai-mock: http:\/\/127\.0\.0\.1:\d+ refused the API key on GET \/v1\/me \(401\), so every case that needs a valid key would fail: check the key \(--api-key, CONFORMANCE_API_KEY\), or pass --continue-on-refused-key to run the cases anyway\n$/,
  );
  assert.not.ok(out.stderr.includes('sk-not-a-key-of-the-mock'));
  const after = (await (await fetch(`${mock.url}/__admin/requests`)).json()) as { data: unknown[] };
  assert.ok(after.data.length - before.data.length <= 2, 'only the probes were sent');
});

test('--continue-on-refused-key runs the cases anyway: a warning up front, and the valid cases fail', async () => {
  const mock = await sharedMock();
  const out = await runCli([
    ...['--base-url', mock.url, '--api-key', 'sk-not-a-key-of-the-mock', '--only', 'me'],
    '--continue-on-refused-key',
  ]);
  assert.match(
    out.stderr,
    /warning: .* refused the API key on GET \/v1\/me \(401\); cases that need a valid key will fail/,
  );
  assert.is(out.code, 1);
  assert.match(out.stdout, /me\.valid/);
  assert.not.ok(out.stdout.includes('sk-not-a-key-of-the-mock'));
});

test('a target that does not offer GET /v1/me (--unsupported me) is not stopped by its 401 there', async () => {
  const mock = await sharedMock();
  const out = await runCli([
    ...['--base-url', mock.url, '--api-key', 'sk-not-a-key-of-the-mock', '--only', 'auth.missing'],
    ...['--unsupported', 'me'],
  ]);
  assert.match(out.stderr, /warning: .* refused the API key/);
  assert.is(out.code, 0, out.stdout);
});

test('bad usage exits 2 with a message; --help exits 0', async () => {
  for (const argv of [
    [],
    ['--base-url', 'http://x'],
    ['--base-url', 'ftp://x', '--api-key', 'k'],
    ['--base-url', 'http://x', '--api-key', 'k', '--profile', 'everything'],
    ['--base-url', 'http://x', '--api-key', 'k', '--concurrency', '0'],
    ['--base-url', 'http://x', '--api-key', 'k', '--no-such-flag'],
    ['--base-url', 'http://x', '--api-key', 'k', '--only', 'nothing-matches-this'],
    ['--base-url', 'http://x', '--api-key', 'k', '--unsupported', 'teleport'],
    ['--base-url', 'http://x', '--api-key', 'k', '--output', 'a.json'],
    ['--base-url', 'http://x', '--api-key', 'k', '--reporter', 'json', '--reporter', 'tap'],
    ['--base-url', 'http://x', '--api-key', 'k', '--reporter', 'xml'],
    ['--base-url', 'http://x', '--api-key', 'k', '--path-prefix', 'v1'],
  ]) {
    const out = await runCli(argv);
    assert.is(out.code, 2, argv.join(' '));
    assert.match(out.stderr, /^unified-ai-mock: /);
  }
  const help = await runCli(['--help']);
  assert.is(help.code, 0);
  assert.match(help.stdout, /--skip-billable/);
});

test('--plan sends no request and prints the cases, the billable count and the paid units', async () => {
  const server = await brokenServer();
  try {
    const out = await runCli([
      '--base-url',
      server.url,
      '--api-key',
      'sk-mock-default',
      '--plan',
      '--image-model',
      'gpt-image-1',
      '--unsupported',
      'video.generate',
    ]);
    assert.is(out.code, 0);
    assert.is(server.requests(), 0);
    assert.match(out.stdout, /Plan \(documented profile\): \d+ cases, \d+ free, \d+ billable/);
    assert.match(
      out.stdout,
      /Estimated paid units if every billable case is sent once: \d+ chat tokens, \d+ images, \d+ video seconds, \d+ TTS characters/,
    );
    assert.match(out.stdout, /images\.n\.above-limit .*not applicable: the rule applies to dall-e-3/);
    assert.match(out.stdout, /video\.minimal .*not applicable: the target does not offer video\.generate/);
    assert.match(out.stdout, /Nothing was sent/);
    const noTarget = await runCli(['--plan', '--profile', 'full', '--skip-billable']);
    assert.is(noTarget.code, 0);
    assert.match(noTarget.stdout, /0 billable; \d+ left out/);
  } finally {
    await server.close();
  }
});

test('--unsupported makes an operation not applicable; a 404 there is no failure', async () => {
  const server = await brokenServer({
    response: (res, req) => void (req.path.startsWith('/video-provider') && (res.status = 404)),
  });
  try {
    const { code, report } = await runJson(server.url, [
      '--unsupported',
      'video.generate',
      '--only',
      'video.generate,me',
    ]);
    assert.is(code, 0);
    const video = report.cases.filter((c) => c.operation === 'video.generate');
    assert.ok(video.length > 10 && video.every((c) => c.verdict === 'not-applicable'));
    assert.ok(report.cases.filter((c) => c.operation === 'me').every((c) => c.verdict === 'pass'));
  } finally {
    await server.close();
  }
});

test('fault cases: detected on the mock, not applicable where the headers are ignored or with --fault-headers off', async () => {
  const mock = await sharedMock();
  const on = await runJson(mock.url, ['--profile', 'full', '--only', 'fault']);
  assert.ok(on.report.cases.length === 14 && on.report.cases.every((c) => c.verdict === 'pass'));
  const off = await runJson(mock.url, ['--profile', 'full', '--only', 'fault', '--fault-headers', 'off']);
  assert.ok(off.report.cases.every((c) => c.verdict === 'not-applicable'));
  const ignoring = await brokenServer({
    request: (r) => void (delete r.headers.prefer, delete r.headers['x-mock-fault']),
  });
  try {
    const auto = await runJson(ignoring.url, ['--profile', 'full', '--only', 'fault']);
    assert.ok(auto.report.cases.every((c) => c.verdict === 'not-applicable' && /fault headers/.test(c.reason!)));
    assert.is(auto.code, 0);
  } finally {
    await ignoring.close();
  }
});

test('filters: --only, --skip, --skip-billable and the DALL-E 3 n rule', async () => {
  const mock = await sharedMock();
  const { report } = await runJson(mock.url, [
    '--only',
    'images',
    '--skip',
    'auth',
    '--skip-billable',
    '--image-model',
    'gpt-image-1',
  ]);
  assert.ok(report.cases.length > 5);
  assert.ok(report.cases.every((c) => c.operation === 'images.generate' && !c.billable && !c.tags.includes('auth')));
  assert.is(report.cases.find((c) => c.id === 'images.n.above-limit')!.verdict, 'not-applicable');
  // Declared the named model, gpt-image-1 (which the mock lets make 4 images) breaks the n <= 1 rule.
  const named = await runJson(mock.url, [
    '--only',
    'images.n.above-limit',
    '--image-model',
    'gpt-image-1',
    '--image-n-max-1',
  ]);
  assert.equal(named.failed, ['images.n.above-limit']);
  const glob = await runJson(mock.url, ['--only', '*.above-max*', ...key(mock).slice(4)]);
  assert.equal(glob.report.cases.map((c) => c.id).sort(), [
    'chat.temperature.above-maximum',
    'chat.top_p.above-maximum',
    'chat@stream.temperature.above-maximum',
    'chat@stream.top_p.above-maximum',
    'images.prompt.above-max-length',
    'speech.pitch.above-maximum',
    'speech.rate.above-maximum',
    'speech@ssml.pitch.above-maximum',
    'speech@ssml.rate.above-maximum',
    'tts.text.above-max-length',
  ]);
});

test.run();
