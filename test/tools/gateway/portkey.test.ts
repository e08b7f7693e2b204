// The gateway profile through a real gateway: Portkey's AI Gateway (a devDependency), started on a free port, the
// runner starting the mock as its upstream, running the recipe of docs/gateway.md as it is written there. Its
// departures are found and each is one docs/gateway.md explains; what it does right passes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../../../src/lib/paths.js';
import { freePort } from '../../support/index.js';
import { startPortkey, type Gateway } from '../../support/portkey.js';
import { runGatewayJson } from './harness.js';

const test = suite('conformance --profile gateway: Portkey AI Gateway in front of the mock');

const DOC = join(ROOT, 'docs', 'gateway.md');

/** Departures from the API document (must): Portkey clamps values out of range; on Node.js 20 it answers every stream
 * 500 after the upstream answered 200 (its issues 1389 and 1550). */
const FAILS = [
  'gateway.forward.chat.temperature.above-maximum',
  'gateway.forward.chat.top_p.above-maximum',
  'gateway.forward.chat@stream',
];
/** Departures from gateway practice (should): a broken upstream answer becomes a 500 in Portkey's own shape. */
const WARNS = ['gateway.error.chat.malformed', 'gateway.error.images.malformed'];
/** The stream cases with no stream to judge: each says gateway.forward.chat@stream judges that. */
const NO_STREAM = [
  'gateway.stream.events',
  'gateway.stream.first-event',
  'gateway.stream.isolation',
  'gateway.stream.pacing',
];

let portkey: Gateway | undefined;
test.after(async () => {
  await portkey?.stop();
});

/** The recipe's command in docs/gateway.md (the block that runs the gateway profile through Portkey), as arguments. */
function recipe(): string[] {
  const blocks = [...readFileSync(DOC, 'utf8').matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const block = blocks.find((b) => b.includes('x-portkey-custom-host') && b.includes('--profile gateway'));
  assert.ok(block, 'docs/gateway.md has the recipe that runs the gateway profile through Portkey');
  const words = block.replace(/\\\n/g, ' ').trim().split(/\s+/);
  assert.equal(words.slice(0, 5), ['npx', 'unified-ai-mock', 'conformance', '--profile', 'gateway']);
  return words.slice(5);
}

test('the recipe of docs/gateway.md through Portkey: its departures are the documented ones, the rest passes', async () => {
  portkey = await startPortkey();
  const port = String(await freePort());
  // The mock's port first: Portkey's own free port may hold the digits 4010 (44010 would become 4 and the mock's port).
  const args = recipe().map((a) => a.replaceAll('4010', port).replace('http://127.0.0.1:8787', portkey!.url));
  assert.ok(args.includes('--upstream-port') && args[args.indexOf('--upstream-port') + 1] === port);

  const run = await runGatewayJson(args);

  assert.is(run.code, 1);
  assert.equal(run.ids('fail'), FAILS);
  assert.equal(run.ids('warn'), WARNS);
  assert.equal(run.ids('inconclusive'), NO_STREAM);
  for (const id of NO_STREAM) assert.match(run.byId(id).reason ?? '', /gateway\.forward\.chat@stream judges that/);
  // What Portkey was seen doing: clamping, and a 500 where the upstream streamed.
  assert.match(
    run.byId('gateway.forward.chat.temperature.above-maximum').failures[0]!.actual,
    /^the upstream got temperature 2 and answered 200$/,
  );
  assert.match(
    run.byId('gateway.forward.chat.top_p.above-maximum').failures[0]!.actual,
    /^the upstream got top_p 1 and answered 200$/,
  );
  assert.match(
    run.byId('gateway.forward.chat@stream').failures[0]!.actual,
    /^status 500: \{"status":"failure","message":"Something went wrong"\}/,
  );
  // The operations it does not carry, and the key it passes through by design.
  const na = run.ids('not-applicable');
  assert.ok(na.includes('gateway.secrets.key'));
  assert.ok(
    na
      .filter((id) => id !== 'gateway.secrets.key')
      .every((id) => /^gateway\.(forward|answer|error)\.(edit|video|tts|speech)\b/.test(id)),
    na.join(' '),
  );
  // What it does right: parameters, answers, the provider's errors with retry-after, a timeout, no retries.
  for (const id of [
    'gateway.forward.chat',
    'gateway.forward.images',
    'gateway.answer.chat',
    'gateway.error.chat.429',
    'gateway.error.chat.retry-after',
    'gateway.error.images.envelope',
    'gateway.stream.cut',
    'gateway.retries.backoff',
  ])
    assert.is(run.byId(id).verdict, 'pass', id);
  assert.match(
    run.byId('gateway.timeout.hung-upstream').reason ?? '',
    /^before its answer: status 408 after \d+ ms; mid-stream: status 500 after \d+ ms/,
  );
  assert.is(
    run.report.summary.passed,
    run.report.cases.length - FAILS.length - WARNS.length - NO_STREAM.length - na.length,
  );

  // docs/gateway.md names every departure and counts them.
  const doc = readFileSync(DOC, 'utf8');
  assert.ok(
    doc.includes(`the run fails ${FAILS.length} cases and warns on ${WARNS.length}`),
    'docs/gateway.md counts the departures',
  );
  for (const id of [...FAILS, ...WARNS, ...NO_STREAM]) assert.ok(doc.includes(`\`${id}\``), id);

  // Without --key-passthrough the client's key reaching the provider is a warning of its own.
  const keyed = await runGatewayJson([...args.filter((a) => a !== '--key-passthrough'), '--only', 'gateway.secrets']);
  assert.equal(keyed.ids('warn'), ['gateway.secrets.key']);
  assert.match(keyed.byId('gateway.secrets.key').failures[0]!.actual, /the upstream got the client's key/);
});

test.run();
