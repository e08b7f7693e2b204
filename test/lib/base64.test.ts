import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeBase64Prefix, isBase64 } from '../../src/lib/base64.js';

// The rule isBase64 must keep, written the slow, obvious way.
const RULE = /^[A-Za-z0-9+/]+={0,2}$/;
const rule = (s: string, start = 0) => RULE.test(s.slice(start)) && (s.length - start) % 4 !== 1;

const STEP = 1 << 16;
const big = (n: number) => Buffer.alloc(n, 0xa7).toString('base64');

test('agrees with the regular expression on hand-picked edge cases', () => {
  const cases = [
    '',
    '=',
    '==',
    'Q',
    'Q=',
    'Q==',
    'Q===',
    'QQ',
    'QQ=',
    'QQ==',
    'QUJD',
    'QUJD=',
    'QUJD==',
    'QUJDQQ==',
    'QUI=QUJD',
    'QQ=A',
    'QUJD*=',
    'QU*JD=',
    'Q-_D',
    'QUJ_',
    'QŁJD',
    'QUJÄ',
    'QUJD\n',
    ' QUJD',
    'QUJD QQ',
    'QU\u0000D',
    '++//',
    'QUJD===',
    '🎉QUJ',
  ];
  for (const s of cases) assert.is(isBase64(s), rule(s), JSON.stringify(s));
});

test('agrees with the regular expression on random strings over a tricky alphabet', () => {
  const char = fc.constantFrom(
    'A',
    'Q',
    'z',
    '0',
    '+',
    '/',
    '=',
    '-',
    '_',
    '*',
    ' ',
    '\n',
    'é',
    'Ł',
    '\u0141',
    '\u0000',
    '.',
  );
  fc.assert(
    fc.property(fc.array(char, { maxLength: 24 }), (chars) => {
      const s = chars.join('');
      assert.is(isBase64(s), rule(s), JSON.stringify(s));
    }),
    { numRuns: 5000 },
  );
});

test('agrees on valid base64 of any bytes, with and without padding', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), fc.boolean(), (bytes, stripPadding) => {
      let s = Buffer.from(bytes).toString('base64');
      if (stripPadding) s = s.replace(/=+$/, '');
      assert.is(isBase64(s), rule(s), s);
    }),
    { numRuns: 2000 },
  );
});

test('honours the start offset of a data URI payload', () => {
  const uri = 'data:image/png;base64,QUJD';
  assert.ok(isBase64(uri, 22));
  assert.not.ok(isBase64(uri, 0));
  assert.not.ok(isBase64(uri, uri.length));
});

test('strings of many decoding steps: valid, and one bad character anywhere is found', () => {
  const s = big(3 * STEP); // 4 * STEP characters, whole groups
  assert.ok(isBase64(s));
  assert.ok(isBase64(`${s}QQ==`));
  assert.ok(isBase64(`${s}QQ`));
  for (const at of [0, STEP - 1, STEP, 2 * STEP + 5, s.length - 1]) {
    for (const bad of ['*', '-', '=', ' ', 'é', 'Ł']) {
      const broken = s.slice(0, at) + bad + s.slice(at + 1);
      // A final '=' is padding, and valid; every other case is not.
      assert.is(isBase64(broken), bad === '=' && at === s.length - 1, `${JSON.stringify(bad)} at ${at}`);
      assert.is(isBase64(broken), rule(broken));
    }
  }
  assert.not.ok(isBase64(`${s}*==`));
  assert.not.ok(isBase64(`${s}Q*=`));
});

test('decodeBase64Prefix decodes the first bytes only', () => {
  const bytes = Buffer.from(Array.from({ length: 300 }, (_, i) => i & 0xff));
  const b64 = `data:x/y;base64,${bytes.toString('base64')}`;
  assert.equal(decodeBase64Prefix(b64, 16, 30), bytes.subarray(0, 30));
  assert.equal(decodeBase64Prefix(b64, 16, 31).subarray(0, 31), bytes.subarray(0, 31));
  assert.equal(decodeBase64Prefix(b64, 16, 10_000), bytes);
});

test.run();
