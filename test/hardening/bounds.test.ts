// State that grows with traffic stays within its configured bounds, however many distinct keys,
// payloads and connections arrive.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningMock } from '../../src/server/server.js';
import { get, post, request, useMock, heldEntries } from '../support/index.js';

const JOURNAL = 50;
const mock = useMock(test, { journalSize: JOURNAL, mediaCache: { entries: 8, bytes: 2 * 1024 * 1024 } });

/** Runs `n` requests, `width` at a time. */
async function many(n: number, width: number, one: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await one(next++);
    }),
  );
}

test('media cache: many distinct images keep it within its entry and byte bounds', async () => {
  const { media } = mock().services;
  await many(60, 4, async (i) =>
    assert.is((await get(mock().url, `/media/images/1024x1024/${i}.png`, null)).status, 200),
  );
  assert.ok(media.size <= 8, `${media.size} entries`);
  assert.ok(media.totalBytes <= 2 * 1024 * 1024, `${media.totalBytes} bytes`);
});

test('journal: a ring buffer of the configured size, long paths cut', async () => {
  await many(3 * JOURNAL, 8, (i) => get(mock().url, `/v1/me?i=${i}`));
  await get(mock().url, `/${'x'.repeat(4000)}`);
  const { journal } = mock().services;
  const entries = heldEntries(mock().services);
  assert.is(entries.length, JOURNAL);
  assert.ok((await journal.total) >= 3 * JOURNAL);
  assert.ok(
    entries.every((e) => e.path.length <= 300),
    'paths are cut',
  );
});

test('rate limiter: thousands of unknown keys and requests add no state beyond the configured keys', async () => {
  await many(1000, 16, (i) => get(mock().url, '/v1/me', `sk-unknown-${i}`));
  await many(50, 4, () => get(mock().url, '/v1/me', 'sk-mock-limited'));
  const limiter = mock().services.rateLimits as unknown as {
    requests: Map<unknown, unknown>;
    tokens: Map<unknown, unknown>;
  };
  assert.ok(limiter.requests.size <= mock().config.keys.length, `${limiter.requests.size} request windows`);
  assert.ok(limiter.tokens.size <= mock().config.keys.length, `${limiter.tokens.size} token windows`);
});

test('fault rules: a client posting rules without end is refused past the maximum, with a 4xx', async () => {
  const m: RunningMock = mock();
  let refused: number | undefined;
  for (let i = 0; i < 1100 && refused === undefined; i++) {
    const res = await post(
      m.url,
      '/__admin/faults',
      { fault: { status: 503 }, match: { operation: 'video.get' } },
      null,
    );
    if (res.status !== 201) refused = res.status;
  }
  assert.ok(refused !== undefined && refused >= 400 && refused < 500, `refused with ${refused}`);
  assert.ok(m.services.faultRules.list().length <= 1000);
  assert.is((await request(m.url, '/__admin/faults', { method: 'DELETE', key: null })).status, 200);
});

test.run();
