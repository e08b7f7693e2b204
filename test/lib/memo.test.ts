import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Recent, kept, memo } from '../../src/lib/memo.js';

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

test('Recent: a key used once a generation stays; one left unused for two generations goes', () => {
  const made: string[] = [];
  const recent = new Recent<number>(4, 1000); // two keys a generation
  const get = (key: string): number => {
    let v = recent.get(key);
    if (v === undefined) {
      made.push(key);
      recent.set(key, (v = key.length));
    }
    return v;
  };
  get('system');
  get('turn 1');
  // The current generation is full: 'turn 2' starts a new one, and 'system' moves into it when asked for.
  for (const turn of ['turn 2', 'turn 3', 'turn 4', 'turn 5']) {
    assert.is(get('system'), 6);
    assert.is(get(turn), 6);
  }
  assert.equal(made, ['system', 'turn 1', 'turn 2', 'turn 3', 'turn 4', 'turn 5']);
  assert.ok(recent.size <= 4);
  // 'turn 1' was not asked for again: it went with its generation.
  get('turn 1');
  assert.equal(made.at(-1), 'turn 1');
});

test('Recent: bounded in keys and in characters; a key longer than half the characters is not kept', () => {
  const recent = new Recent<number>(100, 20); // ten characters a generation
  recent.set('x'.repeat(11), 1);
  assert.is(recent.get('x'.repeat(11)), undefined);
  assert.is(recent.size, 0);
  for (let i = 0; i < 50; i++) recent.set(`key${i}`, i); // four characters each: two a generation
  assert.ok(recent.size <= 4, `at most four keys of 20 characters, held ${recent.size}`);
  assert.is(recent.get('key49'), 49);
  assert.is(recent.get('key0'), undefined);
  const many = new Recent<number>(10, 1_000_000);
  for (let i = 0; i < 1000; i++) many.set(`k${i}`, i);
  assert.ok(many.size <= 10, `at most ten keys, held ${many.size}`);
  // A value set again replaces the one kept, in either generation.
  many.set('k999', -1);
  assert.is(many.get('k999'), -1);
  many.set('k995', -5);
  assert.is(many.get('k995'), -5);
  assert.ok(many.size <= 10);
});

test.run();
