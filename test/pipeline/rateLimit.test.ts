import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningMock } from '../../src/server/server.js';
import { assertError, get, KEY, pathOf, post, VALID, withMock } from '../support/index.js';
import { exchange } from '../domain/faults/wire.js';

const LIMITED = 'sk-mock-limited';
const CHAT = pathOf('chat.completions');

/** A mock whose rate-limit clock stands still until the test moves it. */
async function withClock(
  config: Parameters<typeof withMock>[0],
  fn: (mock: RunningMock, advance: (ms: number) => void) => Promise<void>,
): Promise<void> {
  await withMock(config, async (mock) => {
    let t = 5_000_000;
    mock.services.clock.now = () => t;
    await fn(mock, (ms) => (t += ms));
  });
}

test('the default limited key: 5 requests a minute with x-ratelimit-* headers, then a 429 that says when to return', async () => {
  await withClock({}, async ({ url }, advance) => {
    for (let i = 1; i <= 5; i++) {
      const res = await get(url, '/v1/me', LIMITED);
      assert.is(res.status, 200);
      assert.is(res.headers['x-ratelimit-limit-requests'], '5');
      assert.is(res.headers['x-ratelimit-remaining-requests'], String(5 - i));
      assert.is(res.headers['x-ratelimit-reset-requests'], '1m0s');
      assert.is(res.headers['retry-after'], undefined);
    }
    advance(15_500);
    const refused = await get(url, '/v1/me', LIMITED);
    assertError(refused, 429);
    assert.is(refused.json.error.code, 'rate_limit_exceeded');
    assert.is(refused.json.error.type, 'requests');
    assert.match(
      refused.json.error.message,
      /Rate limit reached for requests on key sk\.\.\.ed: Limit 5, Used 5, Requested 1\. Please try again in 44\.5s\./,
    );
    assert.not.match(refused.text, /sk-mock-limited/);
    assert.is(refused.headers['retry-after'], '45');
    assert.is(refused.headers['retry-after-ms'], '44500');
    assert.is(refused.headers['x-ratelimit-remaining-requests'], '0');
    assert.is(refused.headers['x-ratelimit-reset-requests'], '44.5s');
    advance(44_500);
    const again = await get(url, '/v1/me', LIMITED);
    assert.is(again.status, 200);
    assert.is(again.headers['x-ratelimit-remaining-requests'], '4');
  });
});

test('keys without a limit get no x-ratelimit headers; refused and unauthenticated requests are not counted', async () => {
  await withClock({}, async ({ url, services }) => {
    const free = await get(url, '/v1/me');
    assert.is(free.headers['x-ratelimit-limit-requests'], undefined);
    await get(url, '/v1/me', 'sk-unknown');
    const snap = () => services.rateLimits.snapshot(services.keys);
    assert.is(snap().length, 1);
    assert.is(snap()[0]!.requests.remaining, 5);
  });
});

test('every response to a limited key carries the headers: errors and injected faults too', async () => {
  await withClock({}, async ({ url }) => {
    const invalid = await post(url, CHAT, { model: 'gpt-4o-mini' }, LIMITED);
    assertError(invalid, 400);
    assert.is(invalid.headers['x-ratelimit-remaining-requests'], '4');
    const injected = await get(url, '/v1/me', LIMITED, { 'x-mock-fault': 'status=500' });
    assertError(injected, 500);
    assert.is(injected.headers['x-ratelimit-remaining-requests'], '3');
    const streamed = await exchange(url, CHAT, { key: LIMITED, body: { ...VALID['chat.completions'], stream: true } });
    assert.is(streamed.headers?.['x-ratelimit-remaining-requests'], '2');
  });
});

test('tokens per minute on chat: x-ratelimit-*-tokens headers, usage charged, then a 429 of type tokens', async () => {
  const keys = [
    { key: KEY, label: 'default' },
    { key: 'sk-tpm-test-key-0001', label: 'tpm', rateLimit: { requests: 100, tokensPerMinute: 40 } },
  ];
  await withClock({ keys }, async ({ url }, advance) => {
    const first = await post(url, CHAT, VALID['chat.completions'], 'sk-tpm-test-key-0001');
    assert.is(first.status, 200);
    const used = first.json.usage.total_tokens as number;
    assert.is(first.headers['x-ratelimit-limit-tokens'], '40');
    assert.is(first.headers['x-ratelimit-remaining-tokens'], String(Math.max(0, 40 - used)));
    assert.is(first.headers['x-ratelimit-reset-tokens'], '1m0s');
    const me = await get(url, '/v1/me', 'sk-tpm-test-key-0001');
    assert.is(me.headers['x-ratelimit-limit-tokens'], undefined, 'only chat counts tokens');
    let res = first;
    let sent = 1;
    while (res.status === 200 && sent < 20) {
      res = await post(url, CHAT, { ...VALID['chat.completions'], stream: sent % 2 === 0 }, 'sk-tpm-test-key-0001');
      sent++;
    }
    assertError(res, 429);
    assert.is(res.json.error.type, 'tokens');
    assert.match(
      res.json.error.message,
      /tokens per min \(TPM\) on key sk-t\.\.\.0001: Limit 40, Used \d+\. Please try again in 1m0s\./,
    );
    assert.is(res.headers['x-ratelimit-remaining-tokens'], '0');
    assert.is(res.headers['retry-after'], '60');
    advance(60_000);
    assert.is((await post(url, CHAT, VALID['chat.completions'], 'sk-tpm-test-key-0001')).status, 200);
  });
});

test('a stream without a usage chunk is charged its streamed tokens plus the prompt', async () => {
  const keys = [{ key: KEY, rateLimit: { requests: 100, tokensPerMinute: 100_000 } }];
  await withClock({ keys }, async ({ url, services }) => {
    const plain = await post(url, CHAT, VALID['chat.completions']);
    const total = plain.json.usage.total_tokens as number;
    await exchange(url, CHAT, { body: { ...VALID['chat.completions'], stream: true } });
    await exchange(url, CHAT, {
      body: { ...VALID['chat.completions'], stream: true, stream_options: { include_usage: true } },
    });
    assert.is(services.rateLimits.snapshot(services.keys)[0]!.tokens!.remaining, 100_000 - 3 * total);
  });
});

test.run();
