import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseByteRange } from '../../src/lib/byteRange.js';

test('the three forms of one range: a-b, a- and the suffix -n', () => {
  assert.equal(parseByteRange('bytes=0-9', 100), { start: 0, end: 9 });
  assert.equal(parseByteRange('bytes=10-10', 100), { start: 10, end: 10 });
  assert.equal(parseByteRange('bytes=40-', 100), { start: 40, end: 99 });
  assert.equal(parseByteRange('bytes=99-', 100), { start: 99, end: 99 });
  assert.equal(parseByteRange('bytes=-30', 100), { start: 70, end: 99 });
  assert.equal(parseByteRange('bytes=-1', 100), { start: 99, end: 99 });
  assert.equal(parseByteRange('bytes=007-008', 100), { start: 7, end: 8 }, 'leading zeros are digits');
});

test('an end past the last byte is cut to it; a suffix longer than the body is the whole body', () => {
  assert.equal(parseByteRange('bytes=90-100', 100), { start: 90, end: 99 });
  assert.equal(parseByteRange('bytes=0-99999999999999999999', 100), { start: 0, end: 99 });
  assert.equal(parseByteRange('bytes=-100', 100), { start: 0, end: 99 });
  assert.equal(parseByteRange('bytes=-5000', 100), { start: 0, end: 99 });
});

test('the unit is matched without regard to case, and list whitespace and empty elements are allowed', () => {
  assert.equal(parseByteRange('Bytes=1-2', 100), { start: 1, end: 2 });
  assert.equal(parseByteRange('BYTES=1-2', 100), { start: 1, end: 2 });
  assert.equal(parseByteRange('bytes= 1-2 ', 100), { start: 1, end: 2 });
  assert.equal(parseByteRange('bytes=1-2,', 100), { start: 1, end: 2 });
  assert.equal(parseByteRange('bytes=, 1-2', 100), { start: 1, end: 2 });
});

test('unsatisfiable: a start at or past the end, a suffix of 0, any range of an empty body', () => {
  assert.is(parseByteRange('bytes=100-', 100), 'unsatisfiable');
  assert.is(parseByteRange('bytes=100-200', 100), 'unsatisfiable');
  assert.is(parseByteRange('bytes=99999999999999999999-', 100), 'unsatisfiable');
  assert.is(parseByteRange('bytes=-0', 100), 'unsatisfiable');
  assert.is(parseByteRange('bytes=-000', 100), 'unsatisfiable');
  assert.is(parseByteRange('bytes=0-', 0), 'unsatisfiable');
  assert.is(parseByteRange('bytes=-5', 0), 'unsatisfiable');
});

test('ignored (the whole body): no header, other units, malformed values, several ranges', () => {
  for (const header of [
    undefined,
    '',
    'bytes',
    'bytes=',
    'bytes=-',
    'bytes=,',
    'bytes 0-5',
    ' bytes=0-5',
    'items=0-5',
    'bytes=5-1',
    'bytes=a-b',
    'bytes=1-2-3',
    'bytes=+1-2',
    'bytes=1 -2',
    'bytes=0x10-',
    'bytes=1.5-2',
    'bytes=-1-2',
    'bytes=0-1,5-6',
    'bytes=0-1, -1',
    'bytes=0-1,0-1',
    'bytes=0-1,500-',
  ]) {
    assert.is(parseByteRange(header, 100), undefined, String(header));
  }
});

test.run();
