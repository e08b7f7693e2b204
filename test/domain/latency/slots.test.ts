import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FULL, loadFactor, Slots, type Cap, type Slot } from '../../../src/domain/latency/slots.js';

const CAP = { maxRunning: 2, maxWaiting: 2 };
const isSlot = (got: unknown): got is Slot => typeof (got as Slot).release === 'function';
/** Slots whose models' caps are the test's, changed as it goes (as the admin API changes a model's profile). */
const capped = (caps: Record<string, Cap>) => new Slots((model) => caps[model]);

test('up to maxRunning run at once, then up to maxWaiting wait, then the next is refused', () => {
  const slots = capped({ m: CAP, other: CAP });
  assert.ok(isSlot(slots.acquire('m')));
  assert.ok(isSlot(slots.acquire('m')));
  assert.instance(slots.acquire('m'), Promise);
  assert.instance(slots.acquire('m'), Promise);
  assert.is(slots.acquire('m'), FULL);
  assert.is(slots.running('m'), 2);
  assert.is(slots.waiting('m'), 2);
  // Another model has lanes of its own.
  assert.ok(isSlot(slots.acquire('other')));
  assert.equal([...slots.models()], ['m', 'other']);
});

test('without a cap every request runs at once and is counted; without maxWaiting none waits', () => {
  const slots = capped({ m: {}, n: { maxRunning: 1 } });
  for (let i = 0; i < 5; i++) assert.ok(isSlot(slots.acquire('m')));
  assert.is(slots.running('m'), 5);
  assert.ok(isSlot(slots.acquire('n')));
  assert.is(slots.acquire('n'), FULL);
  // A model with no profile at all runs everything at once too.
  for (let i = 0; i < 3; i++) assert.ok(isSlot(slots.acquire('none')));
});

test('a freed slot goes to the waiters first come, first served; the running count does not dip', async () => {
  const slots = capped({ m: CAP });
  const first = slots.acquire('m') as Slot;
  slots.acquire('m');
  const order: string[] = [];
  const a = (slots.acquire('m') as Promise<Slot | undefined>).then((s) => (order.push('a'), s));
  const b = (slots.acquire('m') as Promise<Slot | undefined>).then((s) => (order.push('b'), s));
  first.release();
  first.release(); // a second release gives nothing back
  assert.is(slots.running('m'), 2);
  assert.is(slots.waiting('m'), 1);
  // A newcomer does not jump the queue: it waits behind b (there is room for it).
  const c = slots.acquire('m');
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
  const caps: Record<string, Cap> = { m: CAP };
  const slots = capped(caps);
  const held = slots.acquire('m') as Slot;
  const held2 = slots.acquire('m') as Slot;
  const leaving = new AbortController();
  const gone = slots.acquire('m', leaving.signal) as Promise<Slot | undefined>;
  const next = slots.acquire('m') as Promise<Slot | undefined>;
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
  caps.m = { maxRunning: 1, maxWaiting: 1 };
  slots.acquire('m');
  const late = new AbortController();
  late.abort();
  assert.is(await (slots.acquire('m', late.signal) as Promise<unknown>), undefined);
  assert.is(slots.waiting('m'), 0);
});

test('a cap raised at run time lets the waiters in, in order, before a newcomer', async () => {
  const caps: Record<string, Cap> = { m: { maxRunning: 1, maxWaiting: 2 } };
  const slots = capped(caps);
  slots.acquire('m');
  const order: string[] = [];
  const a = (slots.acquire('m') as Promise<Slot | undefined>).then(() => void order.push('a'));
  const b = (slots.acquire('m') as Promise<Slot | undefined>).then(() => void order.push('b'));
  caps.m = { maxRunning: 3, maxWaiting: 2 };
  const now = slots.acquire('m');
  assert.instance(now, Promise, 'the newcomer waits: the two waiters took the new room');
  await Promise.all([a, b]);
  assert.equal(order, ['a', 'b']);
  assert.is(slots.running('m'), 3);
  assert.is(slots.waiting('m'), 1);
});

test('a cap lowered at run time is kept to: a slot given back lets a waiter in only while fewer run', async () => {
  const caps: Record<string, Cap> = { m: { maxRunning: 3, maxWaiting: 5 } };
  const slots = capped(caps);
  const held = [slots.acquire('m'), slots.acquire('m'), slots.acquire('m')] as Slot[];
  const waiter = slots.acquire('m') as Promise<Slot | undefined>;
  caps.m = { maxRunning: 1, maxWaiting: 5 };
  held[0]!.release();
  held[1]!.release();
  assert.equal([slots.running('m'), slots.waiting('m')], [1, 1], 'two given back, none passed on: one runs, the cap');
  held[2]!.release();
  assert.ok(await waiter);
  assert.equal([slots.running('m'), slots.waiting('m')], [1, 0]);
});

test('settle: the waiters a cap raised or taken away makes room for come in at once, without a newcomer', async () => {
  const caps: Record<string, Cap | undefined> = { m: { maxRunning: 1, maxWaiting: 5 } };
  const slots = new Slots((model) => caps[model]);
  slots.acquire('m');
  const waiters = [slots.acquire('m'), slots.acquire('m')] as Promise<Slot | undefined>[];
  slots.settle();
  assert.is(slots.waiting('m'), 2, 'nothing changed: they still wait');
  caps.m = undefined; // the model has no profile any more (DELETE /__admin/latency, say)
  slots.settle();
  assert.equal([slots.running('m'), slots.waiting('m')], [3, 0]);
  for (const slot of await Promise.all(waiters)) slot!.release();
  assert.is(slots.running('m'), 1);
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
