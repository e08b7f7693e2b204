import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { kept, memo } from '../../src/lib/memo.js';

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

test('kept: a key longer than keyChars is worked out every time and never kept', () => {
  const made: string[] = [];
  const get = kept<number>(2, 3);
  const length = (key: string): number => {
    made.push(key);
    return key.length;
  };
  assert.is(get('abc', length), 3);
  assert.is(get('abc', length), 3);
  assert.is(get('abcd', length), 4);
  assert.is(get('abcd', length), 4);
  assert.equal(made, ['abc', 'abcd', 'abcd']);
  // The long key took no room: 'abc' and one more fit before the map is emptied.
  assert.is(get('xy', length), 2);
  assert.is(get('abc', length), 3);
  assert.equal(made, ['abc', 'abcd', 'abcd', 'xy']);
});

test.run();
