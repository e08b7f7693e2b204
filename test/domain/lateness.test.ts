import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LatenessHistogram, StreamStats } from '../../src/domain/lateness.js';

/** The exact q-quantile of a sorted list (nearest rank), for comparison. */
const exact = (sorted: number[], q: number) => sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;

test('quantiles are within the bucket width (under 4.5 %) above the exact ones, and the maximum is exact', () => {
  const h = new LatenessHistogram();
  const values: number[] = [];
  let seed = 7;
  for (let i = 0; i < 20_000; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    // Mostly a few ms, a tail into the seconds: the shape of a loaded server's lateness.
    const v = (seed / 2 ** 31) ** 6 * 3000;
    values.push(v);
    h.record(v);
  }
  values.sort((a, b) => a - b);
  for (const q of [0.5, 0.9, 0.99, 0.999]) {
    const want = exact(values, q);
    const got = h.quantile(q)!;
    assert.ok(got >= want - 1e-9 && got <= Math.max(want * 1.045, 0.011), `q=${q}: ${got} for ${want}`);
  }
  assert.is(h.quantile(1), values.at(-1));
  assert.is(h.figures().maxMs, Math.round(values.at(-1)! * 10) / 10);
  assert.is(h.count, 20_000);
});

test('early counts as on time; an empty histogram has no figures; clear empties it', () => {
  const h = new LatenessHistogram();
  assert.equal(h.figures(), { count: 0, p50Ms: null, p99Ms: null, maxMs: null });
  h.record(-3);
  h.record(0);
  h.record(0.004);
  assert.equal(h.figures(), { count: 3, p50Ms: 0, p99Ms: 0, maxMs: 0 });
  h.record(250);
  assert.is(h.figures().maxMs, 250);
  assert.is(h.figures().p99Ms, 250);
  h.clear();
  assert.equal(h.figures(), { count: 0, p50Ms: null, p99Ms: null, maxMs: null });
});

test('a lateness beyond the last bucket is counted in it, and the maximum still says how late', () => {
  const h = new LatenessHistogram();
  h.record(3_600_000);
  assert.is(h.figures().maxMs, 3_600_000);
  assert.is(h.quantile(0.5), 3_600_000);
});

test('stream stats: clearing keeps the open count and restarts the figures', () => {
  const s = new StreamStats();
  s.open = 2;
  s.started = 5;
  s.events.record(3);
  s.firstEvents.record(40);
  const before = s.toJson();
  assert.is(before.object, 'stream_stats');
  assert.equal(before.lateness.events, { count: 1, p50Ms: 3, p99Ms: 3, maxMs: 3 });
  assert.equal(before.lateness.firstEvents, { count: 1, p50Ms: 40, p99Ms: 40, maxMs: 40 });
  s.clear();
  const after = s.toJson();
  assert.is(after.open, 2);
  assert.is(after.started, 0);
  assert.is(after.lateness.events.count, 0);
  assert.ok(Date.parse(after.since) >= Date.parse(before.since));
});

test('the histogram read under coarser bounds: how many at most each, and their sum (for /metrics)', () => {
  const h = new LatenessHistogram();
  for (const ms of [-3, 0.2, 0.9, 1.5, 4, 40, 900]) h.record(ms);
  // Early counts as 0; each count is of the values at most the bound, a value close under a bound at most one
  // fine bucket (4.4 %) away from being counted under it.
  assert.equal(h.atMost([0.5, 1, 2, 5, 50, 1000]), [2, 3, 4, 5, 6, 7]);
  assert.equal(h.atMost([0.1]), [1]);
  assert.is(h.sum, 0 + 0.2 + 0.9 + 1.5 + 4 + 40 + 900);
  h.clear();
  assert.is(h.sum, 0);
  assert.equal(h.atMost([1000]), [0]);
});

test.run();
