// The runner through a real OpenAI-compatible gateway: Portkey's AI Gateway (a devDependency), started on a free port
// in front of the mock, running the recipe of docs/conformance.md as it is written there.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { EntryJson } from '../../../src/domain/journal/journal.js';
import { ROOT } from '../../../src/lib/paths.js';
import { get, request } from '../../support/index.js';
import { startPortkey, type Gateway } from '../../support/portkey.js';
import { closeSharedMock, runJson, sharedMock } from './harness.js';

const test = suite('conformance: through a real gateway (Portkey AI Gateway)');

const DOC = join(ROOT, 'docs', 'conformance.md');

/** The operations Portkey carries to the mock; the recipe declares the others unsupported. */
const CARRIED = ['chat.completions', 'images.generate'];

/** Cases Portkey answers itself (a 500), without forwarding them. */
const ANSWERED_BY_PORTKEY = [
  // It cannot read the body as JSON.
  ...['chat', 'images'].flatMap((op) => ['malformed', 'truncated', 'empty'].map((kind) => `${op}.body.${kind}`)),
  // Its translation of the request fails on a null message.
  'chat.messages.0.wrong-type-null',
  'chat@stream.messages.0.wrong-type-null',
];

/** Out-of-range values Portkey clamps into range before it forwards them (the 200 or the stream's 500 follows). */
const CLAMPED = ['chat', 'chat@stream'].flatMap((path) =>
  ['temperature', 'top_p'].flatMap((field) => [`${path}.${field}.below-minimum`, `${path}.${field}.above-maximum`]),
);

/** Every case the run fails, each a departure of Portkey from the API document (docs/conformance.md lists why). */
const DEPARTURES = [
  ...ANSWERED_BY_PORTKEY,
  ...CLAMPED,
  // Every streamed reply is a 500: the upstream's event stream never reaches the client.
  'chat.stream',
  // The key with no scheme is forwarded as `Bearer <key>`, and served.
  'auth.near-miss.scheme-none.chat',
].sort();

let gateway: Gateway | undefined;
test.after(async () => {
  await gateway?.stop();
  await closeSharedMock();
});

/** The recipe's command in docs/conformance.md (the block that runs the runner through Portkey), as arguments. */
function recipe(): string[] {
  const blocks = [...readFileSync(DOC, 'utf8').matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const block = blocks.find((b) => b.includes('x-portkey-custom-host') && b.includes(' conformance '));
  assert.ok(block, 'docs/conformance.md has the recipe that runs the runner through Portkey');
  const words = block.replace(/\\\n/g, ' ').trim().split(/\s+/);
  assert.equal(words.slice(0, 3), ['npx', 'unified-ai-mock', 'conformance']);
  return words.slice(3);
}

/** Removes an option and its value from the arguments; returns the value. */
function take(args: string[], name: string): string {
  const at = args.indexOf(name);
  assert.ok(at >= 0 && at + 1 < args.length, `the recipe passes ${name}`);
  return args.splice(at, 2)[1]!;
}

test('the recipe of docs/conformance.md through Portkey: chat and image generation cross it, and it departs from the API document in exactly the documented cases', async () => {
  const mock = await sharedMock();
  gateway = await startPortkey();
  const args = recipe();
  assert.is(take(args, '--base-url'), 'http://127.0.0.1:8787');
  const key = take(args, '--api-key');
  const extra = args.map((a) => a.replaceAll('http://127.0.0.1:4010', mock.url));
  assert.is((await request(mock.url, '/__admin/requests', { method: 'DELETE', key: null })).status, 200);

  const run = await runJson(gateway.url, extra, key);

  assert.is(run.code, 1);
  assert.is(
    run.report.target,
    gateway.url,
    'the target is shown as given (the upstream address in a header is no secret)',
  );
  assert.equal(run.failed, DEPARTURES);
  const carried = run.report.cases.filter((c) => CARRIED.includes(c.operation));
  assert.ok(carried.length > 200, `${carried.length} cases of chat and image generation`);
  assert.equal(run.report.summary, {
    ...run.report.summary,
    total: run.report.cases.length,
    passed: carried.length - DEPARTURES.length,
    failed: DEPARTURES.length,
    warnings: 0,
    inconclusive: 0,
    notApplicable: run.report.cases.length - carried.length,
  });
  for (const c of run.report.cases.filter((c) => !CARRIED.includes(c.operation)))
    assert.match(c.reason ?? '', /\(--unsupported\)$/, c.id);
  const doc = readFileSync(DOC, 'utf8');
  assert.ok(doc.includes(`The run fails ${DEPARTURES.length} cases`), 'docs/conformance.md counts the departures');
  for (const id of DEPARTURES) assert.ok(doc.includes(`\`${id}\``), `docs/conformance.md names the departure ${id}`);

  // What reached the mock came through Portkey: at the document's paths under the custom host, without the routing
  // headers the runner sent on every request, each with an Authorization header Portkey wrote (the cases sent
  // without one included).
  const journal = (await get(mock.url, '/__admin/requests', null)).json as { data: EntryJson[] };
  const paths = ['/text-provider/chat/completions', '/text-provider/images/generations'];
  for (const entry of journal.data) {
    const headers = entry.request?.headers ?? {};
    const seen = `${entry.method} ${entry.path}`;
    // The probe of GET /v1/me, which Portkey's proxy sends to the custom host's /me.
    assert.ok(paths.includes(entry.path) || seen === 'GET /text-provider/me', seen);
    assert.equal(
      Object.keys(headers).filter((h) => h.startsWith('x-portkey-')),
      [],
      seen,
    );
    assert.ok(headers.authorization, `${seen}: an Authorization header`);
  }
  // Every attempt of a carried case reached the mock, except those Portkey answered itself.
  const attempts = (ids: (id: string) => boolean) =>
    carried.filter((c) => ids(c.id)).reduce((n, c) => n + c.attempts, 0);
  assert.is(
    journal.data.filter((e) => paths.includes(e.path)).length,
    attempts((id) => !ANSWERED_BY_PORTKEY.includes(id)),
  );
  assert.ok(attempts((id) => ANSWERED_BY_PORTKEY.includes(id)) >= ANSWERED_BY_PORTKEY.length);
  // The runner sent temperature and top_p out of range; none reached the mock so.
  const sent = run.report.cases.filter((c) => CLAMPED.includes(c.id)).map((c) => c.request.body);
  assert.is(sent.length, CLAMPED.length);
  const outOfRange = (b: unknown) => {
    const { temperature: t, top_p: p } = (b ?? {}) as { temperature?: number; top_p?: number };
    return (t !== undefined && (t < 0 || t > 2)) || (p !== undefined && (p < 0 || p > 1));
  };
  assert.ok(sent.every(outOfRange), JSON.stringify(sent));
  const received = journal.data.flatMap((e) => {
    try {
      return [JSON.parse(e.request?.body ?? '') as unknown];
    } catch {
      return [];
    }
  });
  assert.equal(received.filter(outOfRange), []);
});

test.run();
