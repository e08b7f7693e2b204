// Pacing has bounds that hold: header and config values outside them are refused, no stream outlasts
// timeouts.streamMaxMs, and no timer ever overflows (a TimeoutOverflowWarning, then a stream at full speed).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { createApp } from '../../src/app/createApp.js';
import { ConfigError } from '../../src/domain/config.js';
import { assertError, get, KEY, pathOf, post, tick, useMock, virtualTimers, withApp } from '../support/index.js';

const warnings: Error[] = [];
const onWarning = (w: Error) => void warnings.push(w);
test.before(() => void process.on('warning', onWarning));
test.after(() => void process.off('warning', onWarning));

const LIMIT_MS = 400;
const mock = useMock(test, { timeouts: { streamMaxMs: LIMIT_MS } });
const CHAT = pathOf('chat.completions');
const streamed = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true };
const overflowed = () => warnings.filter((w) => w.name === 'TimeoutOverflowWarning');

test('pacing header values outside the bounds are a 400 naming the header, never a timer', async () => {
  const { url } = mock();
  // This mock's stream time limit is LIMIT_MS: the header's ttft may not pass it.
  for (const value of [
    'tps=0.000000000000000001',
    'tps=0.5',
    'ttft=600000',
    'ttft=99999999999999999999999',
    `ttft=${LIMIT_MS + 1}; tps=10`,
  ]) {
    const res = await post(url, CHAT, streamed, KEY, { 'x-mock-pacing': value });
    assertError(res, 400, 'x-mock-pacing');
    assert.is(res.json.error.code, 'invalid_header', value);
  }
  // A delay fault longer than the stall maximum is refused the same way.
  assertError(await post(url, CHAT, streamed, KEY, { 'x-mock-fault': 'delay=99999999999' }), 400, 'x-mock-fault');
  await tick(); // a warning is emitted on the next tick after the timer that overflowed
  assert.equal(overflowed(), []);
});

test('a stream that would run past streamMaxMs ends at the limit with an error event the client can tell from [DONE]', async () => {
  // On stream timers of its own clock: the stream's times are its schedule's, exactly, and no wall clock is read.
  const timers = virtualTimers();
  await withApp({ timeouts: { streamMaxMs: LIMIT_MS } }, { streamTimers: timers }, async (url) => {
    // The long reply (about 1300 tokens) at 20 tokens per second would take over a minute.
    const res = await post(url, CHAT, streamed, KEY, {
      'x-mock-pacing': 'ttft=50; tps=20',
      'x-mock-reply-rule': 'long',
    });
    assert.is(res.status, 200);
    assert.is(timers.now(), LIMIT_MS, 'ended at the limit, not before and not after');
    assert.is(timers.pending, 0, 'no timer left');
    const events = res.text.split('\n\n').filter(Boolean);
    assert.not.ok(res.text.includes('[DONE]'));
    const last = JSON.parse(events.at(-1)!.slice('data: '.length));
    assert.equal([last.error.code, last.error.type], ['stream_time_limit', 'server_error']);
    assert.ok(events.length > 2, 'the events due before the limit were sent');
    const journal = await get(url, '/__admin/requests', null);
    assert.is(journal.json.data.at(-1).stream, 'timed-out');
    assert.equal(overflowed(), []);
  });
});

test('the openai SDK throws on the time-limit event instead of returning a silently short reply', async () => {
  const client = new OpenAI({ apiKey: KEY, baseURL: `${mock().url}/text-provider`, maxRetries: 0 });
  const stream = await client.chat.completions.create(
    { model: 'gpt-4o', messages: [{ role: 'user', content: 'a long answer please' }], stream: true },
    { headers: { 'x-mock-pacing': 'tps=20' } },
  );
  let text = '';
  try {
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.unreachable('the stream should have thrown');
  } catch (err) {
    assert.instance(err, OpenAI.APIError);
    assert.match((err as Error).message, /stream time limit/);
  }
  assert.ok(text.length > 0);
});

test('config pacing and timeouts have the same bounds: refused at start-up, not at the first stream', () => {
  for (const [input, field] of [
    [{ pacing: { tokensPerSecond: 0.5 } }, /pacing\.tokensPerSecond/],
    [{ pacing: { tokensPerSecond: 1e-18 } }, /pacing\.tokensPerSecond/],
    [
      { pacing: { timeToFirstTokenMs: 600000 } },
      /pacing\.timeToFirstTokenMs: 600000 is above timeouts\.streamMaxMs \(120000\)/,
    ],
    [{ pacing: { timeToFirstTokenMs: 5000 }, timeouts: { streamMaxMs: 4000 } }, /pacing\.timeToFirstTokenMs/],
    [{ pacing: { timeToFirstTokenMs: 2 ** 31 }, timeouts: { streamMaxMs: 2 ** 31 - 1 } }, /pacing\.timeToFirstTokenMs/],
    [{ timeouts: { streamMaxMs: 0 } }, /timeouts\.streamMaxMs/],
    [{ timeouts: { streamMaxMs: 2 ** 31 } }, /timeouts\.streamMaxMs/],
    [{ timeouts: { stallMaxMs: 2 ** 31 } }, /timeouts\.stallMaxMs/],
    [{ timeouts: { keepAliveMs: 2 ** 40 } }, /timeouts\.keepAliveMs/],
  ] as const) {
    assert.throws(
      () => createApp(input as Parameters<typeof createApp>[0]),
      (err: unknown) => err instanceof ConfigError && field.test(err.message),
      JSON.stringify(input),
    );
  }
  // In range: tps 0 (no pacing) or at least 1, ttft up to the stream time limit, which may be raised.
  for (const pacing of [
    { tokensPerSecond: 0 },
    { tokensPerSecond: 1 },
    { timeToFirstTokenMs: 120000, tokensPerSecond: 2.5 },
  ])
    createApp({ pacing });
  createApp({ pacing: { timeToFirstTokenMs: 600000 }, timeouts: { streamMaxMs: 900000 } });
  assert.equal(overflowed(), []);
});

test.run();
