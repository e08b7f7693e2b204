// The gateway profile against gateways written here (test/tools/gateway/proxies.ts): a faithful one passes every case,
// and each planted defect is caught by its own case, the others passing. The mock behind each is started by the
// runner, as `--upstream-port` does. Bounds: the paced upstream writes its events 1 s apart and the first event may
// come 0.5 s late (a buffered stream comes 2 s late); a hung upstream is waited for 2.5 s and a grace of 1 s.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Defect } from './proxies.js';
import { gatewayInFront, runGatewayJson } from './harness.js';

const test = suite('conformance --profile gateway: planted gateway defects, each caught by its own case');

/** Every operation's cases of a kind, by the short names their ids carry. */
const everyOperation = (kind: string) =>
  ['chat', 'edit', 'images', 'speech', 'tts', 'video'].map((s) => `gateway.error.${s}.${kind}`).sort();

/** Each defect, the cases that fail on it (with --strict) and those it leaves inconclusive. */
const DEFECTS: readonly { defect: Defect; fails: string[]; inconclusive?: string[] }[] = [
  {
    defect: 'buffers-streams',
    fails: ['gateway.stream.first-event'],
    // Pacing is not judged on a stream whose first event was held: the first-event case told it.
    inconclusive: ['gateway.stream.pacing'],
  },
  { defect: 'drops-retry-after', fails: everyOperation('retry-after') },
  { defect: 'fakes-done', fails: ['gateway.stream.cut'] },
  { defect: 'mixes-streams', fails: ['gateway.stream.isolation'] },
  { defect: 'retries-at-once', fails: ['gateway.retries.backoff'] },
  { defect: 'forwards-key', fails: ['gateway.secrets.key'] },
  { defect: 'clamps-temperature', fails: ['gateway.forward.chat.temperature.above-maximum'] },
  { defect: 'no-timeout', fails: ['gateway.timeout.hung-upstream'] },
];

test('a faithful gateway passes every case: no failure, warning or inconclusive, exit 0', async () => {
  const { gateway, args } = await gatewayInFront();
  try {
    const run = await runGatewayJson(args);
    assert.is(run.code, 0, JSON.stringify(run.report.cases.filter((c) => c.verdict !== 'pass')));
    assert.is(run.report.profile, 'gateway');
    assert.match(run.report.upstream ?? '', /^http:\/\/127\.0\.0\.1:\d+ \(started for the run\)$/);
    assert.equal(run.report.summary.passed, run.report.cases.length);
    assert.ok(run.report.cases.length >= 70, `${run.report.cases.length} cases`);
    // What a pass measured is in the report: the stream's times, the hung upstream's.
    assert.match(run.byId('gateway.stream.first-event').reason ?? '', /the client read the first \d+ ms after/);
    assert.match(run.byId('gateway.timeout.hung-upstream').reason ?? '', /before its answer: status 504 after \d+ ms/);
  } finally {
    await gateway.close();
  }
});

for (const { defect, fails, inconclusive = [] } of DEFECTS)
  test(`a gateway that ${defect.replace(/-/g, ' ')} fails ${fails.length === 1 ? fails[0] : `${fails.length} cases`}, and nothing else`, async () => {
    const { gateway, args } = await gatewayInFront(defect);
    try {
      const run = await runGatewayJson([...args, '--strict']);
      assert.is(run.code, 1);
      assert.equal(run.ids('fail'), fails);
      assert.equal(run.ids('inconclusive'), inconclusive);
      assert.equal(run.ids('warn'), []);
      assert.equal(run.ids('not-applicable'), []);
    } finally {
      await gateway.close();
    }
  });

test('without --strict a should departure is a warning: the run passes (exit 0) and says it', async () => {
  const { gateway, args } = await gatewayInFront('forwards-key');
  try {
    const run = await runGatewayJson([...args, '--only', 'gateway.secrets,gateway.forward.chat']);
    assert.is(run.code, 0);
    assert.equal(run.ids('warn'), ['gateway.secrets.key']);
    assert.match(
      run.byId('gateway.secrets.key').failures[0]!.actual,
      /the upstream got the client's key \(its journal shows it masked, sk-g\.\.\.6789\)/,
    );
  } finally {
    await gateway.close();
  }
});

test.run();
