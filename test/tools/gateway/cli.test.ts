// The gateway profile's command line: its options and their mistakes, --plan and --help, an upstream already running
// (--upstream-admin) left as it was found, a gateway that cannot be reached or does not forward, --baseline, the
// reports, and `unified-ai-mock conformance --profile gateway` from the real command line.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startMockServer } from '../../../src/server/programmatic.js';
import { cli, freePort } from '../../support/index.js';
import { jsonReportProblems, junitProblems, junitTestcases, parseTap } from '../../support/reports.js';
import {
  CLIENT_KEY,
  GATEWAY_TIMEOUT_MS,
  gatewayInFront,
  runGatewayCli,
  runGatewayJson,
  UPSTREAM_KEY,
} from './harness.js';
import { startGateway } from './proxies.js';

const test = suite('conformance --profile gateway: the command line, the upstream, the reports');

const GATEWAY = ['--base-url', 'http://127.0.0.1:9', '--api-key', CLIENT_KEY];

test('usage mistakes are exit 2 with the option named; nothing is sent', async () => {
  const cases: [string[], RegExp][] = [
    [
      GATEWAY,
      /--profile gateway needs the upstream the gateway is configured with: --upstream-port PORT .* or --upstream-admin URL/,
    ],
    [
      [...GATEWAY, '--upstream-port', '1', '--upstream-admin', 'http://127.0.0.1:1'],
      /either by --upstream-port .* or by --upstream-admin/,
    ],
    [[...GATEWAY, '--upstream-port', '70000'], /--upstream-port must be a whole number from 0 to 65535, got '70000'/],
    [
      [...GATEWAY, '--upstream-port', '1', '--upstream-admin-token', 'x'],
      /--upstream-admin-token needs --upstream-admin/,
    ],
    [[...GATEWAY, '--upstream-port', '1', '--model-alias', 'gpt-4o'], /--model-alias must be CLIENT=UPSTREAM/],
    [
      [...GATEWAY, '--upstream-port', '1', '--upstream-gap', '400', '--first-event-bound', '300'],
      /--upstream-gap \(400 ms\) must be at least twice --first-event-bound \(300 ms\)/,
    ],
    [
      [...GATEWAY, '--upstream-port', '1', '--gateway-timeout', '1000', '--upstream-gap', '500'],
      /two --upstream-gap \(1000 ms\), which must be shorter than --gateway-timeout \(1000 ms\)/,
    ],
    [
      [...GATEWAY, '--upstream-port', '1', '--only', 'gateway.nothing'],
      /--only 'gateway.nothing' matches no case of the gateway profile/,
    ],
    [
      [...GATEWAY, '--upstream-port', '1', '--unsupported', 'chats'],
      /--unsupported 'chats' is neither an operation nor a tag/,
    ],
    [[...GATEWAY, '--upstream-port', '1', '--upstream-port'], /--upstream-port needs a value/],
    [['--upstream-port', '1'], /--base-url is required/],
  ];
  for (const [args, message] of cases) {
    const out = await runGatewayCli(args);
    assert.is(out.code, 2, args.join(' '));
    assert.match(out.stderr, message);
    assert.match(out.stderr, /Run 'unified-ai-mock conformance --help'/);
    assert.is(out.stdout, '');
  }
});

test("--help tells the profile's own options; --plan lists every case with its level and phase, sending nothing", async () => {
  const help = await runGatewayCli(['--help']);
  assert.is(help.code, 0);
  for (const option of [
    '--upstream-port',
    '--upstream-admin',
    '--key-passthrough',
    '--model-alias',
    '--gateway-timeout',
    '--first-event-bound',
  ])
    assert.ok(help.stdout.includes(option), option);
  const plan = await runGatewayCli([
    ...GATEWAY,
    '--upstream-port',
    '4999',
    '--plan',
    '--unsupported',
    'voice.tts,stream',
  ]);
  assert.is(plan.code, 0);
  assert.match(
    plan.stdout,
    /^Plan \(gateway profile\): \d+ cases through http:\/\/127\.0\.0\.1:9, with a mock the runner starts on 127\.0\.0\.1:4999 as its upstream/,
  );
  assert.match(
    plan.stdout,
    /\n {2}must {3}gateway\.error\.chat\.429 +the upstream's 429 reaches the client as 429 {2}\[with --concurrency others\]/,
  );
  assert.match(
    plan.stdout,
    /gateway\.stream\.first-event .*\[alone, the upstream paced with --upstream-gap\] {2}\[not applicable: the target does not offer stream \(--unsupported\)\]/,
  );
  assert.match(plan.stdout, /gateway\.forward\.tts .*\[not applicable: the target does not offer voice\.tts/);
  assert.match(plan.stdout, /Nothing was sent\.\n$/);
});

test('an upstream already running (--upstream-admin): the run leaves no fault rule and puts its pacing back', async () => {
  const mock = await startMockServer({
    keys: [
      { key: UPSTREAM_KEY, label: 'default', scopes: ['text'] },
      { key: CLIENT_KEY, label: 'client', scopes: ['text'] },
    ],
  });
  const gateway = await startGateway({ upstream: mock.url, upstreamKey: UPSTREAM_KEY, timeoutMs: GATEWAY_TIMEOUT_MS });
  try {
    await fetch(`${mock.url}/__admin/latency`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ profile: 'small-fast' }),
    });
    const run = await runGatewayJson([
      '--base-url',
      gateway.url,
      '--api-key',
      CLIENT_KEY,
      '--upstream-admin',
      mock.url,
      '--gateway-timeout',
      String(GATEWAY_TIMEOUT_MS),
      '--only',
      'gateway.forward.images,gateway.error.chat.429,gateway.stream.first-event,gateway.secrets',
    ]);
    assert.is(run.code, 0, JSON.stringify(run.report.cases.filter((c) => c.verdict !== 'pass')));
    assert.is(run.report.upstream, mock.url);
    assert.equal(run.ids('pass'), [
      'gateway.error.chat.429',
      'gateway.forward.images',
      'gateway.secrets.key',
      'gateway.stream.first-event',
    ]);
    assert.equal(mock.faultRules(), []);
    const latency = (await (await fetch(`${mock.url}/__admin/latency`)).json()) as { profile: string };
    assert.is(latency.profile, 'small-fast');
  } finally {
    await gateway.close();
    await mock.close();
  }
});

test('a gateway that cannot be reached, or that does not forward to the upstream, is exit 2 saying so', async () => {
  const port = await freePort();
  const unreachable = await runGatewayCli([
    '--base-url',
    `http://127.0.0.1:${await freePort()}`,
    '--api-key',
    CLIENT_KEY,
    '--upstream-port',
    String(port),
  ]);
  assert.is(unreachable.code, 2);
  assert.match(unreachable.stderr, /cannot reach http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
  const elsewhere = createServer((_req, res) =>
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no route"}'),
  );
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
    const out = await runGatewayCli([
      '--base-url',
      url,
      '--api-key',
      CLIENT_KEY,
      '--upstream-port',
      String(await freePort()),
    ]);
    assert.is(out.code, 2);
    assert.match(
      out.stderr,
      /the gateway at http:\/\/127\.0\.0\.1:\d+ did not forward a chat\.completions request to the upstream at http:\/\/127\.0\.0\.1:\d+ \(the gateway answered status 404: \{"error":"no route"\}\)/,
    );
    assert.is(out.stdout, '');
  } finally {
    elsewhere.close();
  }
  const admin = await runGatewayCli([...GATEWAY, '--upstream-admin', `http://127.0.0.1:${port}`]);
  assert.is(admin.code, 2);
  assert.match(admin.stderr, /cannot reach the upstream's admin API at http:\/\/127\.0\.0\.1:\d+/);
});

test('--baseline: another gateway before the same upstream, and where the target departs from it', async () => {
  const { gateway, args } = await gatewayInFront('drops-retry-after');
  // The baseline sends its requests to the same upstream: the port the runner starts it on.
  const baseline = await startGateway({
    upstream: `http://127.0.0.1:${args[args.indexOf('--upstream-port') + 1]}`,
    upstreamKey: UPSTREAM_KEY,
    timeoutMs: GATEWAY_TIMEOUT_MS,
  });
  try {
    const only = ['--only', 'gateway.error.chat.429,gateway.error.chat.400'];
    const run = await runGatewayJson([...args, ...only, '--baseline', baseline.url]);
    assert.is(run.code, 1);
    assert.equal(run.ids('pass'), ['gateway.error.chat.400', 'gateway.error.chat.429']);
    assert.equal(run.byId('gateway.error.chat.429').departures, [
      { check: 'header', what: 'retry-after', target: 'absent', baseline: 'present' },
    ]);
    assert.is(run.byId('gateway.error.chat.400').departures, undefined);
    const reported = await runGatewayJson([...args, ...only, '--baseline', baseline.url, '--baseline-report-only']);
    assert.is(reported.code, 0);
  } finally {
    await gateway.close();
    await baseline.close();
  }
});

test('the pretty report names the upstream and what the passes measured; no report shows a key whole', async () => {
  const { gateway, args } = await gatewayInFront();
  try {
    const out = await runGatewayCli([
      ...args,
      '--upstream-key',
      UPSTREAM_KEY,
      '--only',
      'gateway.stream,gateway.secrets,gateway.error.chat.500',
      '--reporter',
      'pretty',
    ]);
    assert.is(out.code, 0, out.stdout);
    assert.match(
      out.stdout,
      /^Conformance \(gateway profile\) of http:\/\/127\.0\.0\.1:\d+: 7 cases, 0 billable\nUpstream: http:\/\/127\.0\.0\.1:\d+ \(started for the run\)\n/,
    );
    assert.match(
      out.stdout,
      /\nMeasured:\n {2}gateway\.secrets\.key: the upstream got the key sk\.\.\.lt, not the client's\n/,
    );
    assert.match(
      out.stdout,
      /\n {2}gateway\.stream\.first-event: the upstream wrote its events at 0, 0, \d+, \d+, \d+ ms; the client read the first \d+ ms after/,
    );
    assert.match(out.stdout, /7 passed, 0 failed, 0 warnings, 0 inconclusive, 0 not applicable/);
    for (const key of [CLIENT_KEY, UPSTREAM_KEY]) assert.not.ok(out.stdout.includes(key), key);
  } finally {
    await gateway.close();
  }
});

test('every reporter of a gateway run parses: JSON by the published schema, JUnit by its XSD, TAP by tap-parser', async () => {
  const { gateway, args } = await gatewayInFront();
  const only = ['--only', 'gateway.error.chat.500,gateway.secrets'];
  try {
    const json = await runGatewayJson([...args, ...only]);
    assert.is(json.code, 0, json.stderr);
    assert.equal(jsonReportProblems(json.report), []);
    assert.is((json.report as unknown as { profile: string }).profile, 'gateway');
    const junit = await runGatewayCli([...args, ...only, '--reporter', 'junit']);
    const problems = junitProblems(junit.stdout);
    if (problems === undefined)
      console.log(
        '!!! xmllint is missing: the gateway JUnit report was not checked (apt-get install -y libxml2-utils)',
      );
    else assert.equal(problems, []);
    assert.is(junitTestcases(junit.stdout).length, json.report.cases.length);
    const tap = parseTap((await runGatewayCli([...args, ...only, '--reporter', 'tap'])).stdout);
    assert.equal(tap.problems, []);
    assert.is(tap.points.length, json.report.cases.length);
  } finally {
    await gateway.close();
  }
});

test('`unified-ai-mock conformance --profile gateway` on the command line starts the upstream itself', async () => {
  const port = await freePort();
  const gateway = await startGateway({
    upstream: `http://127.0.0.1:${port}`,
    upstreamKey: UPSTREAM_KEY,
    timeoutMs: GATEWAY_TIMEOUT_MS,
  });
  try {
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const { args: node, env } = cli();
    const args = [
      ...node,
      'conformance',
      '--profile',
      'gateway',
      '--base-url',
      gateway.url,
      '--api-key',
      CLIENT_KEY,
      '--upstream-port',
      String(port),
      '--only',
      'gateway.forward.images,gateway.error.chat.500',
    ];
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.is(code, 0, stdout);
    assert.match(stdout, new RegExp(`Upstream: http://127\\.0\\.0\\.1:${port} \\(started for the run\\)`));
    assert.match(stdout, /2 passed, 0 failed/);
  } finally {
    await gateway.close();
  }
});

test.run();
