import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Lru } from '../../src/lib/lru.js';

test('evicts the least recently used entry beyond the entry limit', () => {
  const lru = new Lru<number>(2);
  lru.set('a', 1);
  lru.set('b', 2);
  assert.is(lru.get('a'), 1); // a is now the most recent
  lru.set('c', 3);
  assert.is(lru.get('b'), undefined);
  assert.is(lru.get('a'), 1);
  assert.is(lru.get('c'), 3);
  assert.is(lru.size, 2);
});

test('evicts by total size and never keeps an entry larger than the whole budget', () => {
  const lru = new Lru<string>(10, 10);
  lru.set('a', 'x', 4);
  lru.set('b', 'y', 4);
  assert.is(lru.totalBytes, 8);
  lru.set('c', 'z', 4);
  assert.is(lru.get('a'), undefined);
  assert.is(lru.totalBytes, 8);
  lru.set('huge', 'h', 11);
  assert.is(lru.get('huge'), undefined);
  assert.is(lru.size, 2);
});

test('replacing a key updates its size; delete and clear reset the counters', () => {
  const lru = new Lru<string>(5, 100);
  lru.set('a', 'x', 10);
  lru.set('a', 'y', 30);
  assert.is(lru.totalBytes, 30);
  assert.is(lru.get('a'), 'y');
  lru.delete('a');
  lru.delete('missing');
  assert.is(lru.totalBytes, 0);
  lru.set('b', 'x', 5);
  lru.clear();
  assert.is(lru.size, 0);
  assert.is(lru.totalBytes, 0);
});

test('a zero entry limit caches nothing', () => {
  const lru = new Lru<number>(0);
  lru.set('a', 1);
  assert.is(lru.size, 0);
  let made = 0;
  assert.is(
    lru.getOrMake('a', () => ++made),
    1,
  );
  assert.is(
    lru.getOrMake('a', () => ++made),
    2,
  );
});

test('getOrMake makes a value once and weighs it', () => {
  const lru = new Lru<Buffer>(4, 1000);
  let made = 0;
  const make = () => (made++, Buffer.alloc(100));
  const first = lru.getOrMake('k', make, (b) => b.length);
  assert.is(
    lru.getOrMake('k', make, (b) => b.length),
    first,
  );
  assert.is(made, 1);
  assert.is(lru.totalBytes, 100);
});

test('the order of use stays exact when the same key is asked for again and again, and after deletes', () => {
  const lru = new Lru<number>(2);
  lru.set('a', 1);
  lru.set('b', 2);
  assert.is(lru.get('b'), 2);
  assert.is(lru.get('b'), 2);
  assert.is(lru.get('a'), 1); // a is the most recent now, b the least
  assert.is(lru.get('a'), 1);
  lru.set('c', 3);
  assert.is(lru.get('b'), undefined);
  assert.is(lru.get('a'), 1);
  lru.delete('a'); // the most recent key goes: the next get of c must still move it last
  lru.set('d', 4);
  assert.is(lru.get('c'), 3);
  lru.set('e', 5);
  assert.is(lru.get('d'), undefined);
  assert.is(lru.get('c'), 3);
  lru.clear();
  lru.set('x', 1);
  lru.set('y', 2);
  assert.is(lru.get('x'), 1);
  lru.set('z', 3);
  assert.equal([lru.get('x'), lru.get('y'), lru.get('z')], [1, undefined, 3]);
});

test.run();
