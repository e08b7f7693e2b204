import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { operations } from '../../../src/contract/operations.js';
import { baseUrlHint } from '../../../src/tools/conformance/cli.js';
import { start } from '../../../src/server/server.js';
import { BODY_CHECKS } from '../../../src/verdict/checks.js';
import { closeSharedMock, runCli, runJson, sharedMock } from './harness.js';
import { heldEntries } from '../../support/index.js';

const test = suite('conformance: the mock passes the whole suite');

test.after(closeSharedMock);

test('full profile: every case passes, none inconclusive or not applicable', async () => {
  const { url } = await sharedMock();
  const { code, report } = await runJson(url, ['--profile', 'full']);
  const notPassed = report.cases
    .filter((c) => c.verdict !== 'pass')
    .map((c) => `${c.id}: ${c.verdict} ${c.reason ?? ''} ${JSON.stringify(c.failures)}`);
  assert.equal(notPassed, []);
  assert.is(code, 0);
  assert.ok(report.summary.total > 200, `full profile has ${report.summary.total} cases`);
  // The full profile really looks at bodies, streams and media.
  const checks = new Set(report.cases.flatMap((c) => c.expected.checks));
  for (const name of [...BODY_CHECKS, 'retry-after', 'www-authenticate', 'request-id', 'content-type'])
    assert.ok(checks.has(name), name);
});

test('the whole suite through the validating proxy in front of the mock: the proxy flags only the requests the runner breaks on purpose', async () => {
  const { url } = await sharedMock();
  const proxy = await start({
    port: 0,
    proxy: url,
    upstreamKey: 'sk-mock-default',
    validationProfile: 'full',
    journalSize: 5000,
  });
  try {
    const { code, failed } = await runJson(proxy.url, ['--profile', 'full']);
    assert.equal(failed, []);
    assert.is(code, 0);
    // Every departure the proxy saw is the client's (a body the request schema refuses); the mock, as an
    // upstream, departs from nothing: any other rule here is a false alarm about a correct server.
    const entries = heldEntries(proxy.services);
    const upstream = entries.flatMap((e) =>
      (e.violations ?? [])
        .filter((v) => v.rule !== 'request.schema')
        .map((v) => `${e.operation} ${e.status} ${v.rule}: ${v.actual}`),
    );
    assert.equal(upstream, []);
    assert.ok(
      entries.filter((e) => e.violations?.some((v) => v.rule === 'request.schema')).length > 300,
      "the runner's invalid requests are judged as such",
    );
  } finally {
    await proxy.close();
  }
});

test('full profile with gpt-image-1 (no response_format): nothing fails; the cases that send one are not applicable, saying why', async () => {
  const { url } = await sharedMock();
  const { code, failed, report } = await runJson(url, ['--profile', 'full', '--image-model', 'gpt-image-1']);
  assert.equal(failed, []);
  assert.is(code, 0);
  assert.is(report.summary.inconclusive, 0);
  const notApplicable = report.cases.filter((c) => c.verdict === 'not-applicable');
  assert.equal(notApplicable.map((c) => c.id).sort(), [
    'images.n.above-limit',
    'images.response_format.enum-b64_json',
    'images.response_format.enum-url',
  ]);
  for (const c of notApplicable.filter((n) => n.id.startsWith('images.response_format.'))) {
    assert.is(
      c.reason,
      "the image model gpt-image-1 does not take response_format (the mock's model catalogue, fixtures/models.json)",
    );
  }
});

test('documented profile: every case passes and checks statuses only', async () => {
  const { url } = await sharedMock();
  const { code, report } = await runJson(url);
  assert.is(code, 0);
  assert.is(report.summary.failed, 0);
  assert.is(report.summary.passed, report.summary.total);
  assert.ok(report.cases.every((c) => c.expected.checks.length === 1 && c.expected.checks[0] === 'status'));
  assert.ok(!report.cases.some((c) => c.tags.includes('fault')), 'fault cases belong to the full profile');
});

test('documented profile over /v1: the same cases pass with --path-prefix', async () => {
  const { url } = await sharedMock();
  const { code, report } = await runJson(url, ['--path-prefix', '/v1', '--only', 'auth,chat.temperature,me']);
  assert.is(code, 0);
  assert.is(report.summary.failed, 0);
  assert.ok(report.summary.total >= 30);
});

test('a base URL ending in /v1 (as the OpenAI SDK takes it) gets a warning naming --path-prefix; with the prefix, none', async () => {
  const { url } = await sharedMock();
  const warned = await runCli(['--base-url', `${url}/v1/`, '--api-key', 'sk-mock-default', '--only', 'me.valid']);
  assert.is(warned.code, 1, 'GET /v1/v1/me is not the identity call');
  assert.match(warned.stderr, `warning: --base-url ends in '/v1', so GET /v1/me is asked at /v1/v1/me`);
  assert.match(warned.stderr, `pass --base-url ${url} --path-prefix /v1 instead`);
  const right = await runCli([
    '--base-url',
    url,
    '--path-prefix',
    '/v1',
    '--api-key',
    'sk-mock-default',
    '--only',
    'me.valid',
  ]);
  assert.is(right.code, 0);
  assert.is(right.stderr, '');
});

test("a base URL ending in an operation's prefix (the SDK base URL /text-provider) gets the same kind of hint", async () => {
  const { url } = await sharedMock();
  const warned = await runCli([
    ...['--base-url', `${url}/text-provider/`, '--api-key', 'sk-mock-default'],
    ...['--only', 'chat.temperature.above-maximum'],
  ]);
  assert.is(warned.code, 1, 'the chat cases go to /text-provider/text-provider/...');
  assert.is(
    warned.stderr,
    `unified-ai-mock: warning: --base-url ends in '/text-provider', so POST /text-provider/chat/completions is asked at /text-provider/text-provider/chat/completions. The API document's paths start at the root and the runner adds '/text-provider' itself: pass --base-url ${url} instead.\n`,
  );
  // Every prefix of the operations table, and nothing else.
  const prefixes = [
    ...new Set(operations.filter((op) => op.documented && op.id !== 'me').map((op) => op.path.split('/')[1])),
  ];
  assert.equal(prefixes.sort(), [
    'cloud-provider',
    'image-provider',
    'text-provider',
    'video-provider',
    'voice-provider',
  ]);
  for (const prefix of prefixes) {
    const hint = baseUrlHint(`https://gateway.example.com/api/${prefix}`);
    assert.ok(hint?.startsWith(`--base-url ends in '/${prefix}', so `), prefix);
    assert.ok(hint!.endsWith('pass --base-url https://gateway.example.com/api instead.'), hint);
  }
  assert.is(baseUrlHint('https://gateway.example.com/api'), undefined);
  assert.is(baseUrlHint('https://gateway.example.com/text-provider-eu'), undefined);
  assert.match(baseUrlHint('https://gateway.example.com/v2')!, /--path-prefix \/v2 instead/);
});

test.run();
