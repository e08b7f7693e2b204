import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer } from 'node:http';
import { start, type RunningMock } from '../../src/server/server.js';
import { warmPathSteps } from '../../src/server/warmPath.js';
import { runWhileIdle } from '../../src/text/warmup.js';

const KEY = 'sk-mock-default';
const get = async (m: RunningMock, path: string) =>
  (await fetch(`${m.url}${path}`, { headers: { authorization: `Bearer ${KEY}` } })).json() as Promise<
    Record<string, unknown>
  >;

test('the warm-up runs every request it sends through the whole path: streams, completions, a 400 and a 401', async () => {
  const warm = warmPathSteps();
  try {
    for (const step of warm.steps) await step();
  } finally {
    await warm.close();
  }
  const { statuses } = warm;
  const count = (status: number) => statuses.filter((s) => s === status).length;
  assert.ok(statuses.length >= 300, `${statuses.length} requests`);
  assert.is(count(200) + count(400) + count(401), statuses.length, `statuses: ${[...new Set(statuses)]}`);
  assert.ok(count(400) > 0 && count(401) > 0 && count(200) > statuses.length / 2);
  assert.not.ok(warm.listening());
});

test("npm start's warm-up runs, and leaves nothing in the server's own journal, usage, stream figures or metrics", async () => {
  const mock = await start({ port: 0 }, { warmPath: true });
  try {
    const { requests } = await mock.warmed;
    assert.ok(requests >= 300, `the warm-up sent ${requests} requests`);
    const journal = await get(mock, '/__admin/requests');
    assert.is(journal.total, 0, 'no journal entry');
    const me = (await get(mock, '/v1/me')) as { usage: { requests: number } };
    assert.is(me.usage.requests, 1, 'the key used once: this request');
    const streams = (await get(mock, '/__admin/streams')) as { started: number };
    assert.is(streams.started, 0, 'no stream counted');
    const metrics = await (await fetch(`${mock.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } })).text();
    const counted = metrics.split('\n').filter((l) => /^unified_ai_mock_\w+(\{[^}]*\})? [1-9]/.test(l));
    assert.ok(
      counted.some((l) => l.includes('operation="me"')),
      'the request of this test is counted',
    );
    assert.equal(
      counted.filter((l) => l.includes('chat')),
      [],
      'no chat request, stream or token in /metrics',
    );
  } finally {
    await mock.close();
  }
});

test('servers started from code do not warm up unless asked', async () => {
  const mock = await start({ port: 0 });
  try {
    assert.equal(await mock.warmed, { requests: 0 });
  } finally {
    await mock.close();
  }
});

test('when the server closes during the warm-up, the warm-up stops and closes its own server', async () => {
  const server = createServer((_req, res) => res.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const warm = warmPathSteps();
  const done = runWhileIdle(server, 5, warm.steps, warm.close);
  for (let waited = 0; !warm.listening() && waited < 5000; waited += 5)
    await new Promise((resolve) => setTimeout(resolve, 5));
  assert.ok(warm.listening(), "the warm-up's server is up");
  await new Promise((resolve) => server.close(resolve));
  await done;
  assert.not.ok(warm.listening(), "the warm-up's server is closed");
  assert.ok(warm.statuses.length < 300, `stopped early: ${warm.statuses.length} requests sent`);
});

test.run();
