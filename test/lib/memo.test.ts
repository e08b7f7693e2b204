import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { memo } from '../../src/lib/memo.js';

test('memo: each value made once while it is kept, and forgotten once the map is full', () => {
  const made: string[] = [];
  const upper = memo(3, (key) => {
    made.push(key);
    return key.toUpperCase();
  });
  assert.is(upper('a'), 'A');
  assert.is(upper('a'), 'A');
  assert.is(upper('b'), 'B');
  assert.is(upper('c'), 'C');
  assert.equal(made, ['a', 'b', 'c']);
  // A fourth key finds the map full: it is emptied, so 'a' is made again, and at most 3 are ever kept.
  assert.is(upper('d'), 'D');
  assert.is(upper('a'), 'A');
  assert.equal(made, ['a', 'b', 'c', 'd', 'a']);
  assert.is(upper('d'), 'D');
  assert.equal(made, ['a', 'b', 'c', 'd', 'a']);
});

test.run();
