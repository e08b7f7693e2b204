// Every way a request ends gives back what it took: streams pipelined on one connection whose client leaves close,
// and their model's slots and queue places come back.
import { connect, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RequestRecord } from '../../src/pipeline/requestContext.js';
import { start, type RunningMock } from '../../src/server/server.js';
import { KEY, post, useMock, waitFor } from '../support/index.js';

const records: RequestRecord[] = [];
const mock = useMock(
  test,
  {
    latency: {
      profile: 'off',
      profiles: { capped: { maxRunning: 2, maxWaiting: 50 } },
      models: { 'gpt-4o': 'capped' },
    },
  },
  { observers: [(r) => void records.push(r)] },
);

/** A streamed chat request as raw bytes, its first token a minute away: the client leaves long before. */
function streamed(model: string): string {
  const body = JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  return (
    'POST /v1/text-provider/chat/completions HTTP/1.1\r\nHost: localhost\r\n' +
    `Authorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nX-Mock-Pacing: ttft=60000\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** A streamed request for the long reply, paced at 20 tokens a second: a minute of stream. */
function streamedLong(model: string): string {
  return streamed(model).replace(
    'X-Mock-Pacing: ttft=60000',
    'X-Mock-Pacing: ttft=0; tps=20\r\nX-Mock-Reply-Rule: long',
  );
}

/** Sends `n` streamed requests pipelined on one connection. */
function pipelined(m: RunningMock, model: string, n: number): Socket {
  const socket = connect(m.port, '127.0.0.1', () => socket.write(streamed(model).repeat(n)));
  socket.on('error', () => {});
  socket.resume();
  return socket;
}

/** The resting values: no stream open, no slot running or place waiting for any model. */
function resting(m: RunningMock): string | undefined {
  const { streams, load } = m.services;
  const busy = [...load.models()].filter((model) => load.running(model) || load.waiting(model));
  if (streams.open !== 0) return `${streams.open} streams open`;
  if (busy.length) return busy.map((model) => `${model}: ${load.running(model)}/${load.waiting(model)}`).join(', ');
  return undefined;
}

test('ten paced streams pipelined on one connection, the client gone: each ends aborted, once', async () => {
  records.length = 0;
  const m = mock();
  const socket = pipelined(m, 'gpt-4o-mini', 10);
  // Every stream has begun (the first holds the connection, nine are queued behind it) before the client leaves.
  await waitFor('ten streams open', () => m.services.streams.open === 10);
  socket.destroy();
  await waitFor(
    () => `resting values (${resting(m) ?? 'resting'}, ${records.length} records)`,
    () => !resting(m) && records.length >= 10,
  );
  assert.equal(
    records.map((r) => r.stream),
    Array(10).fill('aborted'),
  );
  assert.is(m.services.streams.open, 0);
});

test("on a capped model: the running slots and the queue's places come back, and the model answers again", async () => {
  records.length = 0;
  const m = mock();
  const socket = pipelined(m, 'gpt-4o', 10);
  await waitFor(
    '2 running and 8 waiting',
    () => m.services.load.running('gpt-4o') === 2 && m.services.load.waiting('gpt-4o') === 8,
  );
  socket.destroy();
  await waitFor(
    () => `resting values (${resting(m) ?? 'resting'})`,
    () => !resting(m) && records.length >= 10,
  );
  assert.equal(
    records.map((r) => r.stream),
    Array(10).fill('aborted'),
  );
  const res = await post(m.url, '/v1/text-provider/chat/completions', {
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.is(res.status, 200);
  await waitFor(
    () => `resting values (${resting(m) ?? 'resting'})`,
    () => !resting(m),
  );
});

test('shutdown: pipelined paced streams of a client that reads end at once, each recorded once, none left open', async () => {
  const own: RequestRecord[] = [];
  const m = await start({ port: 0 }, { observers: [(r) => void own.push(r)] });
  const socket = pipelined(m, 'gpt-4o-mini', 5);
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  await waitFor('five streams open', () => m.services.streams.open === 5);
  await m.shutdown(30_000); // the pacer runs every wait at once: the streams end long before the grace period
  assert.equal(
    own.map((r) => r.stream),
    Array(5).fill('completed'),
  );
  assert.is(m.services.streams.open, 0);
  assert.is(text.split('data: [DONE]').length - 1, 5, 'all five answers reached the client, in turn');
  socket.destroy();
});

test('shutdown: pipelined streams of a client that reads nothing end when the grace period closes the connection', async () => {
  const own: RequestRecord[] = [];
  const m = await start(
    {
      port: 0,
      latency: { profile: 'off', profiles: { one: { maxRunning: 1, maxWaiting: 9 } }, models: { 'gpt-4o': 'one' } },
    },
    { observers: [(r) => void own.push(r)] },
  );
  const socket = connect(m.port, '127.0.0.1', () => {
    socket.write(streamedLong('gpt-4o').repeat(4));
    socket.pause();
  });
  socket.on('error', () => {});
  await waitFor(
    'one running, three waiting',
    () => m.services.load.running('gpt-4o') === 1 && m.services.load.waiting('gpt-4o') === 3,
  );
  await m.shutdown(200);
  await waitFor(
    () => `four records (${own.length})`,
    () => own.length === 4,
  );
  assert.equal(
    [m.services.streams.open, m.services.load.running('gpt-4o'), m.services.load.waiting('gpt-4o')],
    [0, 0, 0],
  );
  socket.destroy();
});

test.run();
