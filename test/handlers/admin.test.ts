import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ModelLoad } from '../../src/domain/latency/types.js';
import { assertError, get, pathOf, post, request, useMock, VALID } from '../support/index.js';

const mock = useMock(test, { journalSize: 50 });
const CHAT = pathOf('chat.completions');
const admin = (method: string, path: string, body?: unknown) => request(mock().url, path, { method, body, key: null });

test.before.each(async () => {
  await admin('DELETE', '/__admin/faults');
  await admin('DELETE', '/__admin/requests');
  await admin('POST', '/__admin/reset');
});

test('add, list and delete fault rules', async () => {
  const added = await admin('POST', '/__admin/faults', {
    id: 'flaky',
    match: { operation: 'chat.completions' },
    fault: { status: 503, retryAfter: 0 },
    times: 1,
  });
  assert.is(added.status, 201);
  assert.equal(added.json, {
    id: 'flaky',
    match: { operation: 'chat.completions' },
    fault: { status: 503, retryAfter: 0 },
    times: 1,
    state: { matched: 0, fired: 0, remaining: 1 },
  });
  const generated = await admin('POST', '/__admin/faults', { fault: { malformed: true }, probability: 0 });
  assert.is(generated.json.id, 'rule-1');
  assertError(await post(mock().url, CHAT, VALID['chat.completions']), 503);
  const list = await admin('GET', '/__admin/faults');
  assert.equal(
    list.json.data.map((r: { id: string; state: unknown }) => [r.id, r.state]),
    [
      ['flaky', { matched: 1, fired: 1, remaining: 0 }],
      ['rule-1', { matched: 0, fired: 0, remaining: null }],
    ],
  );
  assert.equal(list.json.object, 'list');
  assert.equal((await admin('DELETE', '/__admin/faults/flaky')).json, { id: 'flaky', deleted: true });
  const missing = await admin('DELETE', '/__admin/faults/flaky');
  assertError(missing, 404);
  assert.is(missing.json.error.code, 'rule_not_found');
  assert.equal((await admin('DELETE', '/__admin/faults')).json, { deleted: 1 });
  assert.equal((await admin('GET', '/__admin/faults')).json.data, []);
});

test('a rule that breaks the schema or the server rules is a 400 that names the field; a taken id is a 409', async () => {
  const noFault = await admin('POST', '/__admin/faults', { match: {} });
  assertError(noFault, 400, 'fault');
  const badStatus = await admin('POST', '/__admin/faults', { fault: { status: 302 } });
  assertError(badStatus, 400, 'fault.status');
  const unknownField = await admin('POST', '/__admin/faults', { fault: { status: 500 }, when: 'always' });
  assertError(unknownField, 400);
  const conflict = await admin('POST', '/__admin/faults', { fault: { reset: true, status: 500 } });
  assertError(conflict, 400, 'fault');
  assert.is(conflict.json.error.code, 'invalid_fault_rule');
  assert.match(conflict.json.error.message, /'reset' and 'status' cannot be combined/);
  const op = await admin('POST', '/__admin/faults', { match: { operation: 'chat' }, fault: { status: 500 } });
  assertError(op, 400, 'match.operation');
  await admin('POST', '/__admin/faults', { id: 'x', fault: { status: 500 }, match: { key: 'limited' } });
  const taken = await admin('POST', '/__admin/faults', { id: 'x', fault: { status: 500 } });
  assertError(taken, 409, 'id');
  assert.is(taken.json.error.code, 'duplicate_rule_id');
  const huge = await admin('POST', '/__admin/faults', {
    match: { body: { model: 'x'.repeat(1_000_000) } },
    fault: { status: 500 },
  });
  assertError(huge, 400, 'match.body.model');
  assert.match(huge.json.error.message, /maximum length 1024/);
  assert.is((await admin('GET', '/__admin/faults')).json.data.length, 1);
});

test('reset gives rate-limited keys their allowance back and rules their first state', async () => {
  const { url } = mock();
  await admin('POST', '/__admin/faults', { id: 'once', match: { operation: 'me' }, fault: { status: 500 }, times: 1 });
  for (let i = 0; i < 5; i++) await get(url, '/v1/me', 'sk-mock-limited');
  assertError(await get(url, '/v1/me', 'sk-mock-limited'), 429);
  const limits = await admin('GET', '/__admin/rate-limits');
  assert.equal(
    limits.json.data.map((d: { label: string; key: string; requests: { remaining: number } }) => [
      d.label,
      d.key,
      d.requests.remaining,
    ]),
    [['limited', 'sk...ed', 0]],
  );
  assert.equal((await admin('POST', '/__admin/reset')).json, { reset: ['rate_limits', 'fault_rules'] });
  assert.is((await admin('GET', '/__admin/rate-limits')).json.data[0].requests.remaining, 5);
  assertError(await get(url, '/v1/me', 'sk-mock-limited'), 500, null); // the times:1 rule fires again
  const after = await get(url, '/v1/me', 'sk-mock-limited');
  assert.is(after.status, 200);
  assert.is(after.headers['x-ratelimit-remaining-requests'], '3');
});

test('the journal records each request with what a test needs to assert on, and can be cleared', async () => {
  const { url } = mock();
  await post(url, CHAT, VALID['chat.completions'], undefined, { 'x-stainless-retry-count': '2' });
  await post(url, CHAT, { model: 'gpt-4o-mini', temperature: 9 }, undefined);
  await get(url, '/v1/me', 'sk-mock-limited', { 'x-mock-fault': 'status=502;no-retry' });
  await get(url, '/nowhere');
  await admin('GET', '/__admin/faults');
  const journal = (await admin('GET', '/__admin/requests')).json;
  assert.is(journal.object, 'list');
  assert.is(journal.total, 4, 'admin calls are not journaled');
  assert.is(journal.capacity, 50);
  const [ok, invalid, faulted, unknown] = journal.data;
  assert.is(ok.operation, 'chat.completions');
  assert.is(ok.status, 200);
  assert.is(ok.retryCount, 2);
  assert.is(ok.model, 'gpt-4o-mini');
  assert.is(ok.keyLabel, 'sk...lt');
  assert.type(ok.latencyMs, 'number');
  assert.type(ok.time, 'number');
  assert.is(invalid.status, 400);
  assert.ok(invalid.details.length >= 2);
  assert.is(faulted.status, 502);
  assert.is(faulted.fault, 'status=502;no-retry [header]');
  assert.is(faulted.keyLabel, 'sk...ed');
  assert.is(unknown.status, 404);
  assert.is(unknown.operation, undefined);
  assert.not.match(JSON.stringify(journal), /sk-mock-default|sk-mock-limited/);
  assert.equal((await admin('DELETE', '/__admin/requests')).json, { deleted: 4 });
  assert.equal((await admin('GET', '/__admin/requests')).json.data, []);
});

test('GET /__admin/streams: streams started and open, and the lateness of their paced events; DELETE clears the figures', async () => {
  await admin('DELETE', '/__admin/streams');
  const paced = await request(mock().url, CHAT, {
    method: 'POST',
    body: { ...VALID['chat.completions'], stream: true },
    headers: { 'x-mock-pacing': 'ttft=5; tps=200' },
  });
  assert.is(paced.status, 200);
  const unpaced = await post(mock().url, CHAT, { ...VALID['chat.completions'], stream: true });
  assert.is(unpaced.status, 200);
  const events = paced.text.split('\n\n').filter((e) => e.startsWith('data: {')).length;
  const stats = await admin('GET', '/__admin/streams');
  assert.is(stats.status, 200);
  assert.is(stats.json.object, 'stream_stats');
  assert.is(stats.json.started, 2);
  assert.is(stats.json.open, 0);
  // The paced stream's first event, and every event after it; the unpaced stream keeps no time.
  assert.is(stats.json.lateness.firstEvents.count, 1);
  assert.is(stats.json.lateness.events.count, events - 1);
  assert.type(stats.json.lateness.events.p99Ms, 'number');
  const entries = (await admin('GET', '/__admin/requests')).json.data;
  const late = entries.map((e: { streamLateMs?: number }) => e.streamLateMs);
  assert.type(late[0], 'number', 'the paced stream has its worst lateness in the journal');
  const worst = Math.max(stats.json.lateness.events.maxMs, stats.json.lateness.firstEvents.maxMs);
  assert.ok(Math.abs(late[0] - worst) <= 0.1, `journal ${late[0]} ms, figures ${worst} ms`);
  assert.is(late[1], undefined, 'the unpaced one has none');
  const cleared = await admin('DELETE', '/__admin/streams');
  assert.is(cleared.status, 200);
  assert.is(cleared.json.started, 0);
  assert.is(cleared.json.lateness.events.count, 0);
  assert.is((await admin('GET', '/__admin/streams')).json.lateness.firstEvents.maxMs, null);
});

test('GET, PUT and DELETE /__admin/latency: the view, a change from the next request on, back to the configuration', async () => {
  await admin('DELETE', '/__admin/latency');
  const view = await admin('GET', '/__admin/latency');
  assert.is(view.status, 200);
  assert.is(view.json.profile, 'off');
  assert.is(view.json.seed, 0);
  assert.is(view.json.draws, 0);
  assert.is(view.json.queueFullStatus, 429);
  const slow = view.json.profiles['large-slow'];
  assert.equal(slow.ttft, { type: 'lognormal', median: 600, sigma: 0.35, max: 5000 });
  assert.ok(Math.abs(slow.summary.ttft.p99 - 600 * Math.exp(2.3263478740408408 * 0.35)) < 1e-3);
  assert.equal(
    view.json.models.find((m: { model: string }) => m.model === 'gpt-4o'),
    { model: 'gpt-4o', kind: 'text', profile: null, from: null, running: 0, waiting: 0 },
  );

  const changed = await admin('PUT', '/__admin/latency', {
    profile: 'catalogue',
    seed: 7,
    profiles: { crawl: { ttft: { type: 'uniform', lower: 100, upper: 300 }, interToken: 50 } },
    models: { 'gpt-4o': 'crawl' },
  });
  assert.is(changed.status, 200);
  assert.is(changed.json.profile, 'catalogue');
  assert.is(changed.json.seed, 7);
  assert.equal(changed.json.profiles.crawl.summary.ttft.p50, 200);
  const line = (id: string) => changed.json.models.find((m: { model: string }) => m.model === id);
  const idle = { running: 0, waiting: 0 };
  assert.equal(line('gpt-4o'), { model: 'gpt-4o', kind: 'text', profile: 'crawl', from: 'admin', ...idle });
  assert.equal(line('o3-mini'), { model: 'o3-mini', kind: 'text', profile: 'reasoning', from: 'catalogue', ...idle });
  assert.equal(line('dall-e-3'), { model: 'dall-e-3', kind: 'image', profile: 'image', from: 'catalogue', ...idle });
  assert.equal((await admin('GET', '/__admin/latency')).json, changed.json);

  // A bad name or value: a 400 naming the field, nothing changed.
  const unknown = await admin('PUT', '/__admin/latency', { models: { 'gpt-4o': 'warp' } });
  assertError(unknown, 400, 'models.gpt-4o');
  assert.match(unknown.json.error.message, /'warp' is not a profile\. Use one of: off, catalogue, small-fast, /);
  assertError(await admin('PUT', '/__admin/latency', { profile: 'warp' }), 400, 'profile');
  assertError(await admin('PUT', '/__admin/latency', { seed: -1 }), 400, 'seed');
  assertError(await admin('PUT', '/__admin/latency', { speed: 2 }), 400);
  const badDist = await admin('PUT', '/__admin/latency', {
    profiles: { p: { ttft: { type: 'uniform', lower: 9, upper: 1 } } },
  });
  assertError(badDist, 400, 'profiles.p.ttft');
  // A profile's shape is checked against the catalogue's definition, each violation named under `profiles`.
  const badShape = await admin('PUT', '/__admin/latency', { profiles: { p: { ttft: 'fast', maxRunning: 0 } } });
  assertError(badShape, 400, 'profiles.p.ttft');
  assert.match(badShape.json.error.message, /'profiles\.p\.ttft'/);
  assert.ok(
    badShape.json.error.details.some((d: { param: string }) => d.param === 'profiles.p.maxRunning'),
    'every violation in details',
  );
  assertError(await admin('PUT', '/__admin/latency', { profiles: { p: { speed: 2 } } }), 400, 'profiles.p.speed');
  const reserved = await admin('PUT', '/__admin/latency', { profiles: { off: {} } });
  assertError(reserved, 400, 'profiles.off');
  assert.match(
    reserved.json.error.message,
    /^Invalid value for 'profiles\.off': 'off' is reserved .*`off` and `catalogue` are settings, not names/,
  );
  assert.equal((await admin('GET', '/__admin/latency')).json, changed.json);

  const reset = await admin('DELETE', '/__admin/latency');
  assert.is(reset.status, 200);
  assert.equal(reset.json, view.json);
});

test("GET /__admin/latency: each model's line carries this instance's running and waiting requests of it", async () => {
  const services = mock().services as { load: ModelLoad };
  const was = services.load;
  services.load = {
    running: (model) => (model === 'gpt-4o' ? 3 : 0),
    waiting: (model) => (model === 'gpt-4o' ? 2 : 0),
    models: () => ['gpt-4o'],
  };
  try {
    const { models } = (await admin('GET', '/__admin/latency')).json;
    const line = (id: string) => models.find((m: { model: string }) => m.model === id);
    assert.equal([line('gpt-4o').running, line('gpt-4o').waiting], [3, 2]);
    assert.equal([line('o3-mini').running, line('o3-mini').waiting], [0, 0]);
  } finally {
    services.load = was;
  }
});

test('the latency settings follow the admin rule: a client not on loopback needs the admin token', async () => {
  const res = await request(mock().url, '/__admin/latency', { key: null, headers: { host: 'example.com' } });
  assertError(res, 403);
});

test('unknown admin paths are 404 and wrong methods 405, in the envelope', async () => {
  assertError(await admin('GET', '/__admin/nothing'), 404);
  assertError(await admin('PUT', '/__admin/faults'), 405);
});

test('state stays bounded: the journal keeps its size and limits track configured keys only, under many requests and keys', async () => {
  const { url, services } = mock();
  for (let i = 0; i < 120; i++) await get(url, '/v1/me', i % 3 === 0 ? `sk-random-${i}` : 'sk-mock-limited');
  const journal = (await admin('GET', '/__admin/requests')).json;
  assert.is(journal.data.length, 50);
  assert.is(journal.total, 120);
  assert.is(services.rateLimits.snapshot(services.keys).length, 1);
});

test.run();
