import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { KeyConfig } from '../../../src/domain/config.js';
import { formatDuration, RateLimiter } from '../../../src/domain/rateLimits/limiter.js';
import { keyStates } from '../../../src/domain/keys.js';

function setup(configs: KeyConfig[]) {
  let t = 1_000_000;
  const clock = { now: () => t, sleep: async () => {} };
  return { limiter: new RateLimiter(clock), keys: keyStates(configs), advance: (ms: number) => (t += ms) };
}

test('durations are written as OpenAI writes x-ratelimit-reset-*', () => {
  assert.is(formatDuration(0), '0ms');
  assert.is(formatDuration(120.2), '121ms');
  assert.is(formatDuration(1000), '1s');
  assert.is(formatDuration(8640), '8.64s');
  assert.is(formatDuration(59_999), '59.999s');
  assert.is(formatDuration(360_000), '6m0s');
  assert.is(formatDuration(61_500), '1m1.5s');
  assert.is(formatDuration(-5), '0ms');
});

test('a fixed window: N requests pass, the next is refused until the window ends', () => {
  const { limiter, keys, advance } = setup([{ key: 'k1', rateLimit: { requests: 2, windowMs: 10_000 } }]);
  const k = keys[0]!;
  assert.equal(limiter.admit(k, false)!.requests, { limit: 2, remaining: 1, resetMs: 10_000 });
  advance(4000);
  assert.equal(limiter.admit(k, false)!.requests, { limit: 2, remaining: 0, resetMs: 6000 });
  const refused = limiter.admit(k, false)!;
  assert.is(refused.refused, 'requests');
  assert.equal(refused.requests, { limit: 2, remaining: 0, resetMs: 6000 });
  advance(5999);
  assert.is(limiter.admit(k, false)!.refused, 'requests');
  advance(1);
  assert.equal(limiter.admit(k, false)!.requests, { limit: 2, remaining: 1, resetMs: 10_000 });
});

test('a key without a limit is not tracked; the default window is a minute', () => {
  const { limiter, keys } = setup([{ key: 'free' }, { key: 'k2', rateLimit: { requests: 5 } }]);
  assert.is(limiter.admit(keys[0]!, true), undefined);
  assert.is(limiter.charge(keys[0]!, 100), undefined);
  assert.is(limiter.admit(keys[1]!, false)!.requests.resetMs, 60_000);
  assert.is(limiter.admit(keys[1]!, true)!.tokens, undefined);
});

test('tokens per minute: charged after use, refusing once the window is spent', () => {
  const { limiter, keys, advance } = setup([{ key: 'k3', rateLimit: { requests: 100, tokensPerMinute: 50 } }]);
  const k = keys[0]!;
  assert.equal(limiter.admit(k, true)!.tokens, { limit: 50, remaining: 50, resetMs: 60_000 });
  assert.equal(limiter.charge(k, 30), { limit: 50, remaining: 20, resetMs: 60_000 });
  assert.is(limiter.admit(k, true)!.refused, undefined);
  limiter.charge(k, 30);
  advance(10_000);
  const refused = limiter.admit(k, true)!;
  assert.is(refused.refused, 'tokens');
  assert.is(refused.tokensUsed, 60);
  assert.equal(refused.tokens, { limit: 50, remaining: 0, resetMs: 50_000 });
  assert.is(refused.requests.remaining, 98, 'a refused request is not counted');
  assert.is(limiter.admit(k, false)!.refused, undefined, 'other operations do not count tokens');
  advance(50_000);
  assert.is(limiter.admit(k, true)!.refused, undefined);
});

test('snapshot shows what is left without counting; reset gives every key its allowance back', () => {
  const { limiter, keys, advance } = setup([
    { key: 'free' },
    { key: 'k4', label: 'l', rateLimit: { requests: 3, windowMs: 1000, tokensPerMinute: 10 } },
  ]);
  const k = keys[1]!;
  assert.equal(
    limiter.snapshot(keys).map((s) => [s.requests, s.tokens]),
    [
      [
        { limit: 3, remaining: 3, resetMs: 0 },
        { limit: 10, remaining: 10, resetMs: 0 },
      ],
    ],
  );
  limiter.admit(k, true);
  limiter.charge(k, 4);
  advance(200);
  assert.equal(limiter.snapshot(keys)[0]!.requests, { limit: 3, remaining: 2, resetMs: 800 });
  assert.equal(limiter.snapshot(keys)[0]!.tokens, { limit: 10, remaining: 6, resetMs: 59_800 });
  limiter.reset();
  assert.equal(limiter.snapshot(keys)[0]!.requests, { limit: 3, remaining: 3, resetMs: 0 });
});

test.run();
