// State in Redis shared by two instances: exact limits and fault counts under concurrency, one journal,
// video tasks polled anywhere, and what happens while Redis is away. Needs redis-server on PATH (the
// tests start their own on a free loopback port); without it they are skipped with one loud line.
import { suite, test } from 'uvu';
import * as assert from 'uvu/assert';
import { Redis } from 'ioredis';
import { mulberry32 } from '../../src/lib/prng.js';
import { ConfigError, resolveConfig } from '../../src/domain/config.js';
import { SchemaRegistry } from '../../src/contract/schemas.js';
import type { RedisState } from '../../src/domain/state/redis.js';
import type { LatencyControl } from '../../src/domain/latency/types.js';
import { start, type RunningMock } from '../../src/server/server.js';
import { get, KEY, post, request, VALID, waitFor, type Res } from '../support/index.js';
import { findRedisServer, TestRedis } from './redisServer.js';

const LIMITED = 'sk-limited-five-per-minute';
const KEYS = [
  { key: KEY, label: 'default' },
  { key: LIMITED, label: 'limited', rateLimit: { requests: 5 } },
];
const CONFIGURED = { id: 'configured', match: { operation: 'models.list' }, fault: { status: 502 }, times: 1 };

test('state is memory or a redis:// URL; anything else names the field', () => {
  assert.is(resolveConfig({}, SchemaRegistry.shared()).state, 'memory');
  assert.is(
    resolveConfig({ state: 'redis://127.0.0.1:6379' }, SchemaRegistry.shared()).state,
    'redis://127.0.0.1:6379',
  );
  assert.throws(
    () => resolveConfig({ state: 'postgres://x' }, SchemaRegistry.shared()),
    (err: unknown) => err instanceof ConfigError && /state/.test(err.message),
  );
});

test.run();

const bin = findRedisServer();
if (!bin) {
  console.warn(
    '\n!!! SKIPPED test/state/redis.test.ts: redis-server is not on PATH, so shared state in Redis (limits, fault rules, journal, video tasks, Redis outages) was NOT tested. Install it: apt-get install -y redis-server\n',
  );
} else {
  const t = suite('redis state');
  let redis: TestRedis;
  let a: RunningMock;
  let b: RunningMock;
  const startOne = (url: string, extra: Record<string, unknown> = {}) =>
    start({
      port: 0,
      state: url,
      keys: KEYS,
      faultRules: [CONFIGURED],
      video: { progress: true },
      logLevel: 'silent',
      ...extra,
    });

  t.before(async () => {
    redis = await TestRedis.create(bin);
    [a, b] = await Promise.all([startOne(redis.url), startOne(redis.url)]);
  });
  t.after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await redis?.dispose();
  });

  const both = (i: number) => (i % 2 ? b : a).url;
  const count = (list: Res[], status: number) => list.filter((r) => r.status === status).length;

  t('the configured fault rules are written once, by the first instance on an empty Redis', async () => {
    const rules = (await get(b.url, '/__admin/faults', null)).json.data as { id: string }[];
    assert.equal(
      rules.map((r) => r.id),
      ['configured'],
    );
    const listed = await Promise.all([0, 1, 2, 3].map((i) => get(both(i), '/v1/models')));
    assert.is(count(listed, 502), 1, 'times: 1 across both instances');
    assert.is((await request(a.url, '/__admin/faults', { method: 'DELETE' })).json.deleted, 1);
  });

  t('the Lua generator draws what src/lib/prng.ts draws, for any seed', async () => {
    const state = a.services.state as RedisState;
    for (const seed of [0, 1, 42, 123456789, 0xffffffff]) {
      const js = mulberry32(seed);
      const expected = Array.from({ length: 300 }, () => js());
      assert.equal(await state.draws(seed, 300), expected, `seed ${seed}`);
    }
  });

  t('a limit of 5 per minute: exactly 5 successes across two instances under 200 concurrent requests', async () => {
    await request(a.url, '/__admin/reset', { method: 'POST' });
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => get(both(i), '/v1/me', LIMITED)));
    assert.is(count(results, 200), 5);
    assert.is(count(results, 429), 195);
    const refused = results.find((r) => r.status === 429)!;
    assert.is(refused.json.error.code, 'rate_limit_exceeded');
    assert.is(refused.headers['x-ratelimit-remaining-requests'], '0');
    const snapshot = (await get(b.url, '/__admin/rate-limits', null)).json.data;
    assert.is(snapshot[0].requests.remaining, 0);
    await request(b.url, '/__admin/reset', { method: 'POST' });
    assert.is(
      (await get(a.url, '/v1/me', LIMITED)).headers['x-ratelimit-remaining-requests'],
      '4',
      'a reset on one instance is a reset for all',
    );
  });

  t('tokens per minute are charged to the shared window', async () => {
    const keys = [
      ...KEYS,
      { key: 'sk-tpm-shared-key-0001', label: 'tpm', rateLimit: { requests: 100, tokensPerMinute: 1000 } },
    ];
    const [c, d] = await Promise.all([startOne(redis.url, { keys }), startOne(redis.url, { keys })]);
    try {
      const first = await post(
        c.url,
        '/text-provider/chat/completions',
        VALID['chat.completions'],
        'sk-tpm-shared-key-0001',
      );
      const used = first.json.usage.total_tokens as number;
      const second = await post(
        d.url,
        '/text-provider/chat/completions',
        VALID['chat.completions'],
        'sk-tpm-shared-key-0001',
      );
      assert.is(second.headers['x-ratelimit-remaining-tokens'], String(1000 - 2 * used));
    } finally {
      await Promise.all([c.close(), d.close()]);
    }
  });

  t('a rule with times: 2 fails exactly 2 requests across both instances', async () => {
    const added = await post(
      a.url,
      '/__admin/faults',
      { id: 'twice', match: { operation: 'me' }, fault: { status: 500 }, times: 2 },
      null,
    );
    assert.is(added.status, 201);
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => get(both(i), '/v1/me')));
    assert.is(count(results, 500), 2);
    assert.is(count(results, 200), 98);
    const [rule] = (await get(b.url, '/__admin/faults', null)).json.data;
    assert.equal(rule.state, { matched: 2, fired: 2, remaining: 0 });
    assert.is((await post(b.url, '/__admin/faults', { id: 'twice', fault: { status: 500 } }, null)).status, 409);
    await request(b.url, '/__admin/reset', { method: 'POST' });
    assert.equal((await get(a.url, '/__admin/faults', null)).json.data[0].state, {
      matched: 0,
      fired: 0,
      remaining: 2,
    });
    assert.is((await request(b.url, '/__admin/faults/twice', { method: 'DELETE' })).status, 200);
    assert.is((await request(a.url, '/__admin/faults/twice', { method: 'DELETE' })).status, 404);
  });

  t('a seeded probability gives the same faults as in memory, whichever instance answers', async () => {
    const rule = { match: { operation: 'me' }, fault: { status: 503 }, probability: 0.3, seed: 99 };
    assert.is((await post(b.url, '/__admin/faults', rule, null)).json.id, 'rule-1');
    const shared: number[] = [];
    for (let i = 0; i < 40; i++) if ((await get(both(i), '/v1/me')).status === 503) shared.push(i);
    const memory = await start({ port: 0, faultRules: [rule], logLevel: 'silent' });
    const alone: number[] = [];
    try {
      for (let i = 0; i < 40; i++) if ((await get(memory.url, '/v1/me')).status === 503) alone.push(i);
    } finally {
      await memory.close();
    }
    assert.ok(shared.length > 3 && shared.length < 30, String(shared));
    assert.equal(shared, alone);
    assert.is((await request(a.url, '/__admin/faults', { method: 'DELETE' })).json.deleted, 1);
  });

  t("the journal holds both instances' requests, each with the instance that answered", async () => {
    await request(a.url, '/__admin/requests', { method: 'DELETE' });
    for (let i = 0; i < 6; i++) await get(both(i), '/v1/models');
    // A record reaches Redis in the background, after its response: the journal is read until all six are in.
    const journal = await waitFor('six requests in the shared journal', async () => {
      const read = (await get(b.url, '/__admin/requests', null)).json as {
        data: { instance: string; path: string }[];
        total: number;
        unrecorded: number;
      };
      return read.data.length >= 6 && read;
    });
    assert.is(journal.data.length, 6);
    assert.is(journal.total, 6);
    assert.is(journal.unrecorded, 0);
    const instances = new Set(journal.data.map((e) => e.instance));
    assert.equal(
      [...instances].sort(),
      [(a.services.state as RedisState).instance, (b.services.state as RedisState).instance].sort(),
    );
    assert.ok(journal.data.every((e) => e.path === '/v1/models'));
    assert.is((await request(a.url, '/__admin/requests', { method: 'DELETE' })).json.deleted, 6);
  });

  t("one journal per process: its store is the state's Redis stream, and its live feed writes there too", async () => {
    await request(a.url, '/__admin/requests', { method: 'DELETE' });
    const state = a.services.state as RedisState;
    assert.is(state.journalStore(a.services.journal.capacity), state.journalStore(1), 'one store per state');
    for (let i = 0; i < 2; i++) await get(both(i), '/v1/models');
    // The process's own journal reads what both instances wrote: there is no second, local journal.
    const view = await waitFor('both requests in the journal', async () => {
      const read = await a.services.journal.view();
      return read.entries.length >= 2 && read;
    });
    assert.is(view.total, 2);
    assert.is(view.capacity, a.services.journal.capacity);
    // A follower of the feed gets this instance's entry, and the same entry reaches Redis for every instance.
    const fed: string[] = [];
    const stop = a.services.journal.subscribe((e) => fed.push(e.requestId), 1)!;
    const res = await get(a.url, '/v1/models');
    stop();
    assert.equal(fed, [res.headers['x-request-id']]);
    const after = await waitFor('the followed request in Redis', async () => {
      const entries = await b.services.journal.entries();
      return entries.length >= 3 && entries;
    });
    assert.is(after.at(-1)!.requestId, res.headers['x-request-id']);
    assert.is((await request(b.url, '/__admin/requests', { method: 'DELETE' })).json.deleted, 3);
  });

  t('a video task made on one instance is polled on the other, one step per poll', async () => {
    const made = await post(a.url, '/video-provider/generate', VALID['video.generate']);
    assert.is(made.json.status, 'queued');
    assert.is((await get(b.url, `/video-provider/generate/${made.json.id}`)).json.status, 'generating');
    assert.is((await get(a.url, `/video-provider/generate/${made.json.id}`)).json.status, 'completed');
    assert.is((await get(b.url, '/video-provider/generate/vid_nosuchtask')).status, 404);
  });

  t(
    'under a latency profile a video task follows its drawn duration by wall time, on every instance alike',
    async () => {
      const profile = { name: 'slow-video', profile: { duration: 20_000 }, from: 'config' as const };
      const real = [a, b].map((m) => ({ now: m.services.clock.now, latency: m.services.latency }));
      let now = 5_000_000;
      for (const m of [a, b]) {
        m.services.clock.now = () => now;
        (m.services as { latency: LatencyControl }).latency = {
          ...m.services.latency,
          choose: () => profile,
          draws: () => ({ draw: () => 20_000 }),
        };
      }
      try {
        const made = await post(a.url, '/video-provider/generate', { ...VALID['video.generate'], seed: 77 });
        assert.is(made.json.status, 'queued');
        const poll = (m: RunningMock) => get(m.url, `/video-provider/generate/${made.json.id}`).then((r) => r.json);
        // Polls do not move it (video.progress is on here): wall time does.
        assert.is((await poll(b)).status, 'queued');
        assert.is((await poll(a)).status, 'queued');
        now += 2_000;
        assert.is((await poll(b)).status, 'generating');
        now += 18_000;
        const done = await poll(b);
        assert.is(done.status, 'completed');
        assert.ok(done.video.url);
        assert.is((await poll(a)).status, 'completed');
      } finally {
        [a, b].forEach((m, i) => {
          m.services.clock.now = real[i]!.now;
          (m.services as { latency: LatencyControl }).latency = real[i]!.latency;
        });
      }
    },
  );

  t(
    'Redis stopped, not killed (SIGSTOP): /__health turns 503 and says why, within its PING wait; on SIGCONT it is ok again',
    async () => {
      const { healthPingMs } = a.services.limits.state;
      assert.is((await get(a.url, '/__health', null)).status, 200);
      redis.pause();
      try {
        // The connection is still open and ready: only the missing answer tells.
        const health = await get(a.url, '/__health', null);
        assert.is(health.status, 503);
        assert.is(health.json.status, 'unavailable');
        assert.match(
          health.json.reason,
          new RegExp(`^Redis at redis://127\\.0\\.0\\.1:\\d+ did not answer a PING within ${healthPingMs} ms`),
        );
        assert.is((await get(b.url, '/__health', null)).status, 503, 'each instance asks for itself');
      } finally {
        redis.resume();
      }
      assert.is((await get(a.url, '/__health', null)).status, 200);
      assert.is((await get(b.url, '/__health', null)).json.status, 'ok');
    },
  );

  t(
    'Redis away: 503 state_unavailable, /__health 503 with the reason, lost journal records counted; back: recovery',
    async () => {
      const client = new Redis(redis.url);
      await client.set('uam:marker', '1');
      await client.quit();
      await redis.stop('SIGKILL');
      await waitFor('the instance to see Redis gone', async () => !(await a.services.state.health()).ok);
      const limited = await get(a.url, '/v1/me', LIMITED);
      assert.is(limited.status, 503);
      assert.is(limited.json.error.code, 'state_unavailable');
      assert.is(limited.json.error.type, 'server_error');
      assert.is(limited.headers['retry-after'], '1');
      assert.match(limited.json.error.message, /redis:\/\/127\.0\.0\.1:\d+/);
      assert.is((await get(b.url, '/v1/models')).status, 503, 'fault rules cannot be decided either');
      assert.is((await get(b.url, '/__admin/requests', null)).status, 503);
      const health = await get(a.url, '/__health', null);
      assert.is(health.status, 503);
      assert.is(health.json.status, 'unavailable');
      assert.match(health.json.reason, /^Redis at redis:\/\/127\.0\.0\.1:\d+ is /);
      assert.ok(health.json.unrecorded >= 1, 'the 503s above could not be journalled, and say so');
      assert.is((await get(a.url, '/openapi.json', null)).status, 200, 'what needs no state still answers');

      await redis.start();
      const back = await waitFor('both instances back on Redis', async () => {
        const health = await get(a.url, '/__health', null);
        return health.status === 200 && (await get(b.url, '/__health', null)).status === 200 && health;
      });
      assert.is(back.status, 200);
      assert.is(back.json.state, 'redis');
      assert.is((await get(b.url, '/v1/me', LIMITED)).status, 200);
      // Redis came back empty: the configured rules are written again by the first instance to reconnect.
      await waitFor(
        'the configured rules written again',
        async () => (await get(a.url, '/__admin/faults', null)).json.data?.length > 0,
      );
      assert.equal(
        (await get(a.url, '/__admin/faults', null)).json.data.map((r: { id: string }) => r.id),
        ['configured'],
      );
    },
  );

  t.run();
}
