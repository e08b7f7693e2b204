import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FULL, loadFactor, Slots, type Slot } from '../../../src/domain/latency/slots.js';

const CAP = { maxRunning: 2, maxWaiting: 2 };
const isSlot = (got: unknown): got is Slot => typeof (got as Slot).release === 'function';

test('up to maxRunning run at once, then up to maxWaiting wait, then the next is refused', () => {
  const slots = new Slots();
  assert.ok(isSlot(slots.acquire('m', CAP)));
  assert.ok(isSlot(slots.acquire('m', CAP)));
  assert.instance(slots.acquire('m', CAP), Promise);
  assert.instance(slots.acquire('m', CAP), Promise);
  assert.is(slots.acquire('m', CAP), FULL);
  assert.is(slots.running('m'), 2);
  assert.is(slots.waiting('m'), 2);
  // Another model has lanes of its own.
  assert.ok(isSlot(slots.acquire('other', CAP)));
  assert.equal([...slots.models()], ['m', 'other']);
});

test('without a cap every request runs at once and is counted; without maxWaiting none waits', () => {
  const slots = new Slots();
  for (let i = 0; i < 5; i++) assert.ok(isSlot(slots.acquire('m', {})));
  assert.is(slots.running('m'), 5);
  const one = { maxRunning: 1 };
  assert.ok(isSlot(slots.acquire('n', one)));
  assert.is(slots.acquire('n', one), FULL);
});

test('a freed slot goes to the waiters first come, first served; the running count does not dip', async () => {
  const slots = new Slots();
  const first = slots.acquire('m', CAP) as Slot;
  slots.acquire('m', CAP);
  const order: string[] = [];
  const a = (slots.acquire('m', CAP) as Promise<Slot | undefined>).then((s) => (order.push('a'), s));
  const b = (slots.acquire('m', CAP) as Promise<Slot | undefined>).then((s) => (order.push('b'), s));
  first.release();
  first.release(); // a second release gives nothing back
  assert.is(slots.running('m'), 2);
  assert.is(slots.waiting('m'), 1);
  // A newcomer does not jump the queue: it waits behind b (there is room for it).
  const c = slots.acquire('m', CAP);
  assert.instance(c, Promise);
  const sa = await a;
  assert.ok(sa);
  sa.release();
  const sb = await b;
  assert.ok(sb);
  assert.equal(order, ['a', 'b']);
  assert.is(slots.waiting('m'), 1);
});

test('a waiter whose client leaves gives up its place: no waiter and no slot is left behind', async () => {
  const slots = new Slots();
  const held = slots.acquire('m', CAP) as Slot;
  const held2 = slots.acquire('m', CAP) as Slot;
  const leaving = new AbortController();
  const gone = slots.acquire('m', CAP, leaving.signal) as Promise<Slot | undefined>;
  const next = slots.acquire('m', CAP) as Promise<Slot | undefined>;
  leaving.abort();
  assert.is(await gone, undefined);
  assert.is(slots.waiting('m'), 1);
  held.release();
  const s = await next;
  assert.ok(s);
  s.release();
  held2.release();
  assert.is(slots.running('m'), 0);
  assert.is(slots.waiting('m'), 0);
  // A signal already aborted gets no place at all.
  slots.acquire('m', { maxRunning: 1, maxWaiting: 1 });
  const late = new AbortController();
  late.abort();
  assert.is(await (slots.acquire('m', { maxRunning: 1, maxWaiting: 1 }, late.signal) as Promise<unknown>), undefined);
  assert.is(slots.waiting('m'), 0);
});

test('a cap raised at run time lets the waiters in, in order, before a newcomer', async () => {
  const slots = new Slots();
  const one = { maxRunning: 1, maxWaiting: 2 };
  slots.acquire('m', one);
  const order: string[] = [];
  const a = (slots.acquire('m', one) as Promise<Slot | undefined>).then(() => void order.push('a'));
  const b = (slots.acquire('m', one) as Promise<Slot | undefined>).then(() => void order.push('b'));
  const now = slots.acquire('m', { maxRunning: 3, maxWaiting: 2 });
  assert.instance(now, Promise, 'the newcomer waits: the two waiters took the new room');
  await Promise.all([a, b]);
  assert.equal(order, ['a', 'b']);
  assert.is(slots.running('m'), 3);
  assert.is(slots.waiting('m'), 1);
});

test('the load factor: 1 alone, loadFactor at the cap, linear between; none without a cap', () => {
  const p = { loadFactor: 3, maxRunning: 5 };
  assert.is(loadFactor(p, 1), 1);
  assert.is(loadFactor(p, 3), 2);
  assert.is(loadFactor(p, 5), 3);
  assert.is(loadFactor(p, 9), 3);
  assert.is(loadFactor(p, 0), 1);
  assert.is(loadFactor({ loadFactor: 3 }, 10), 1);
  assert.is(loadFactor({ loadFactor: 3, maxRunning: 1 }, 1), 1);
  assert.is(loadFactor({ maxRunning: 5 }, 5), 1);
});

test.run();
