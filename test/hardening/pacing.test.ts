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

test('one rule for every answer it can time: a header part out of bounds or given twice is a 400 naming it', async () => {
  const { url } = mock();
  const plain = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
  for (const [body, value, quoted] of [
    [plain, 'profile=large-slow; ttft=999999', "'ttft=999999': ttft is above the answer time limit of 120000 ms"],
    [
      streamed,
      'profile=large-slow; ttft=999999',
      `'ttft=999999': ttft is above the stream time limit of ${LIMIT_MS} ms`,
    ],
    [plain, 'ttft=5;ttft=10', "'ttft=10': ttft is given twice"],
    [plain, 'profile=medium, profile=small-fast', "'profile=small-fast': profile is given twice"],
    [plain, 'tps=0.5', "'tps=0.5': tps is below 1"],
    [plain, 'fast', "'fast'"],
  ] as const) {
    const res = await post(url, CHAT, body, KEY, { 'x-mock-pacing': value });
    assertError(res, 400, 'x-mock-pacing');
    assert.ok(res.json.error.message.includes(quoted), `${value}: ${res.json.error.message}`);
  }
  // A plain answer's ttft is bounded by the answer time limit, not the stream's.
  assert.is((await post(url, CHAT, plain, KEY, { 'x-mock-pacing': `ttft=${LIMIT_MS + 1}` })).status, 200);
  // The other operations a profile times read it too; one it cannot time never reads it.
  const image = await post(url, pathOf('images.generate'), { model: 'dall-e-3', prompt: 'a cat' }, KEY, {
    'x-mock-pacing': 'ttft=5;ttft=5',
  });
  assertError(image, 400, 'x-mock-pacing');
  assert.is((await get(url, '/v1/me', KEY, { 'x-mock-pacing': 'fast' })).status, 200);
  assert.equal(overflowed(), []);
});

test('an hour between tokens on a long plain answer: held for the answer time limit, not a thousand hours', async () => {
  const config = {
    timeouts: { answerMaxMs: 200 },
    latency: { profile: 'hourly', profiles: { hourly: { interToken: 3_600_000 } } },
  };
  await withApp(config, {}, async (url, app) => {
    // The wait asked of the clock, without waiting it: a wait that was not cut would hold the test for weeks.
    const waits: number[] = [];
    app.services.clock.sleep = async (ms) => void waits.push(ms);
    const res = await post(url, CHAT, { model: 'gpt-4o', messages: [{ role: 'user', content: 'a long answer' }] });
    assert.is(res.status, 200);
    assert.ok(res.json.usage.completion_tokens > 1000, 'a long answer: over a thousand hours of gaps');
    assert.equal(waits, [200], 'cut to timeouts.answerMaxMs');
  });
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
    [{ timeouts: { answerMaxMs: 0 } }, /timeouts\.answerMaxMs/],
    [{ timeouts: { answerMaxMs: 2 ** 31 } }, /timeouts\.answerMaxMs/],
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
