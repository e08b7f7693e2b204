import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { Completions, completeText, findStop, type Completion } from '../../src/text/complete.js';
import { countTokens, decode, encode, type Encoding, type Piece } from '../../src/text/tokenizer.js';

const fixture = JSON.parse(readFileSync(new URL('../../fixtures/replies.json', import.meta.url), 'utf8')) as {
  rules: { id: string; reply: string }[];
};
const LONG = fixture.rules.find((r) => r.id === 'long')!.reply;
const UNICODE = fixture.rules.find((r) => r.id === 'unicode')!.reply;
const ENCODINGS: Encoding[] = ['o200k_base', 'cl100k_base'];

const texts = (pieces: readonly Piece[]): string[] => pieces.map((p) => p.text);

/** Pieces join to the content, never split a character, and their token counts add up to the completion's. */
function checkPieces(r: Completion): void {
  assert.is(texts(r.pieces).join(''), r.content);
  assert.is(
    r.pieces.reduce((sum, p) => sum + p.tokens, 0),
    r.completionTokens,
  );
  for (const { text: p, tokens } of r.pieces) {
    assert.ok(tokens >= 1, 'a piece without a token');
    assert.ok(p.length > 0, 'empty piece');
    // A lone surrogate at either end would mean a code point was split between pieces.
    assert.not.ok(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(p), `split surrogate pair in ${JSON.stringify(p)}`);
  }
}

test('no limits: whole text, finish "stop", exact token count', () => {
  const r = completeText({ text: 'Hello there, how may I assist you today?', encoding: 'o200k_base' });
  assert.is(r.content, 'Hello there, how may I assist you today?');
  assert.is(r.finishReason, 'stop');
  assert.is(r.completionTokens, countTokens(r.content, 'o200k_base'));
  checkPieces(r);
});

test('max_tokens cuts to exactly N tokens with finish "length"', () => {
  for (const enc of ENCODINGS) {
    const all = encode(LONG, enc);
    for (const n of [1, 2, 7, 100, all.length - 1]) {
      const r = completeText({ text: LONG, maxTokens: n, encoding: enc });
      assert.is(r.finishReason, 'length');
      assert.is(r.completionTokens, n);
      assert.is(r.content, decode(all.slice(0, n), enc));
      assert.ok(LONG.startsWith(r.content));
      checkPieces(r);
    }
  }
});

test('max_tokens of 1 gives the first token only', () => {
  const r = completeText({ text: 'tiktoken is great!', maxTokens: 1, encoding: 'o200k_base' });
  assert.equal(
    [r.content, r.finishReason, r.completionTokens, r.pieces],
    ['t', 'length', 1, [{ text: 't', tokens: 1 }]],
  );
});

test('max_tokens equal to or above the length is not a cut', () => {
  const n = countTokens('2 + 2 = 4.', 'o200k_base');
  for (const maxTokens of [n, n + 1, 10_000]) {
    const r = completeText({ text: '2 + 2 = 4.', maxTokens, encoding: 'o200k_base' });
    assert.equal([r.content, r.finishReason, r.completionTokens], ['2 + 2 = 4.', 'stop', n]);
  }
});

test('max_tokens cut inside a CJK character keeps N tokens and the pieces still join exactly', () => {
  // cl100k: お | 誕(bytes 1-2) | 誕(byte 3) | 生 ... (cookbook section 5), so 2 tokens end mid-character.
  const r = completeText({ text: 'お誕生日おめでとう', maxTokens: 2, encoding: 'cl100k_base' });
  assert.is(r.completionTokens, 2);
  assert.is(r.finishReason, 'length');
  assert.is(r.content, 'お\uFFFD');
  assert.equal(r.pieces, [
    { text: 'お', tokens: 1 },
    { text: '\uFFFD', tokens: 1 },
  ]);
  const whole = completeText({ text: 'お誕生日おめでとう', maxTokens: 3, encoding: 'cl100k_base' });
  // 誕 took two tokens, so its piece counts two: pacing by tokens per second stays exact.
  assert.equal(whole.pieces, [
    { text: 'お', tokens: 1 },
    { text: '誕', tokens: 2 },
  ]);
});

test('every max_tokens cut of emoji/CJK text has exact token count and exact joins', () => {
  for (const enc of ENCODINGS) {
    const total = countTokens(UNICODE, enc);
    for (let n = 1; n < total; n++) {
      const r = completeText({ text: UNICODE, maxTokens: n, encoding: enc });
      assert.is(r.completionTokens, n);
      checkPieces(r);
      // Only the last piece can carry the replacement character of a cut mid-character.
      assert.not.ok(
        texts(r.pieces)
          .slice(0, -1)
          .some((p) => p.includes('\uFFFD')),
        `U+FFFD mid-stream at n=${n}`,
      );
    }
  }
});

test('stop cuts before the earliest occurrence among several stops', () => {
  const text = 'one two three four two three';
  const r = completeText({ text, stop: ['four', 'three', 'two'], encoding: 'o200k_base' });
  assert.is(r.content, 'one ');
  assert.is(r.finishReason, 'stop');
  assert.is(r.completionTokens, countTokens('one ', 'o200k_base'));
  assert.is(findStop(text, ['zzz']), -1);
  assert.is(findStop(text, ['three', 'four']), 8);
});

test('stop at position 0 gives empty content, zero tokens, no pieces, finish "stop"', () => {
  const r = completeText({ text: 'Hello world', stop: ['Hello'], encoding: 'o200k_base' });
  assert.equal(r, { content: '', finishReason: 'stop', completionTokens: 0, pieces: [] });
});

test('empty stop strings are ignored; absent stops leave the text', () => {
  const r = completeText({ text: 'abc', stop: ['', 'zzz'], encoding: 'o200k_base' });
  assert.is(r.content, 'abc');
  assert.is(completeText({ text: 'abc', stop: [], encoding: 'o200k_base' }).content, 'abc');
});

test('stop first, then max_tokens on what remains', () => {
  const text = 'alpha beta gamma delta STOP epsilon';
  const r = completeText({ text, stop: ['STOP'], maxTokens: 2, encoding: 'o200k_base' });
  assert.is(r.finishReason, 'length');
  assert.is(r.completionTokens, 2);
  const fits = completeText({ text, stop: ['STOP'], maxTokens: 50, encoding: 'o200k_base' });
  assert.equal([fits.content, fits.finishReason], ['alpha beta gamma delta ', 'stop']);
});

test('long reply streams in many pieces (about one token each) that join exactly', () => {
  const r = completeText({ text: LONG, encoding: 'o200k_base' });
  assert.is(r.content, LONG);
  assert.is(r.pieces.length, r.completionTokens);
  assert.ok(r.pieces.length > 1000);
  checkPieces(r);
});

test('emoji and CJK text: whole text round-trips and pieces are whole characters', () => {
  for (const enc of ENCODINGS) {
    const r = completeText({ text: UNICODE, encoding: enc });
    assert.is(r.content, UNICODE);
    assert.ok(r.pieces.length > 1);
    checkPieces(r);
    assert.not.ok(texts(r.pieces).some((p) => p.includes('\uFFFD')));
  }
});

test('Completions: each encoding and each cut has its own completion, and a repeat is the one made before', () => {
  const cache = new Completions(4, 1024 * 1024);
  const plain = cache.get({ text: UNICODE, encoding: 'o200k_base' });
  assert.is(cache.get({ text: UNICODE, encoding: 'o200k_base' }), plain);
  assert.equal(plain, completeText({ text: UNICODE, encoding: 'o200k_base' }));
  const other = cache.get({ text: UNICODE, encoding: 'cl100k_base' });
  assert.equal(other, completeText({ text: UNICODE, encoding: 'cl100k_base' }));
  assert.is.not(other.completionTokens, plain.completionTokens);
  assert.equal(
    cache.get({ text: UNICODE, maxTokens: 3, encoding: 'o200k_base' }),
    completeText({ text: UNICODE, maxTokens: 3, encoding: 'o200k_base' }),
  );
  assert.equal(
    cache.get({ text: UNICODE, stop: ['.'], encoding: 'o200k_base' }),
    completeText({ text: UNICODE, stop: ['.'], encoding: 'o200k_base' }),
  );
  assert.equal(
    cache.get({ text: UNICODE, maxTokens: 3, stop: ['.'], encoding: 'cl100k_base' }),
    completeText({ text: UNICODE, maxTokens: 3, stop: ['.'], encoding: 'cl100k_base' }),
  );
  // A cut of another text is that text's, also when the cache has forgotten the first text's number.
  const one = new Completions(1, 1024 * 1024);
  const hello = one.get({ text: 'Hello there.', maxTokens: 2, encoding: 'o200k_base' });
  const other2 = one.get({ text: 'Something else.', maxTokens: 2, encoding: 'o200k_base' });
  assert.equal(other2, completeText({ text: 'Something else.', maxTokens: 2, encoding: 'o200k_base' }));
  assert.equal(one.get({ text: 'Hello there.', maxTokens: 2, encoding: 'o200k_base' }), hello, 'made again, the same');
  // Past its bounds the cache forgets, and makes the completion again.
  const small = new Completions(1, 1024 * 1024);
  const first = small.get({ text: 'Hello there.', encoding: 'o200k_base' });
  small.get({ text: 'Something else.', encoding: 'o200k_base' });
  const again = small.get({ text: 'Hello there.', encoding: 'o200k_base' });
  assert.is.not(again, first);
  assert.equal(again, first);
});

test('empty text and invalid maxTokens', () => {
  assert.equal(completeText({ text: '', encoding: 'o200k_base' }), {
    content: '',
    finishReason: 'stop',
    completionTokens: 0,
    pieces: [],
  });
  assert.equal(completeText({ text: 'abc', maxTokens: 0, encoding: 'o200k_base' }).finishReason, 'length');
  assert.throws(() => completeText({ text: 'abc', maxTokens: -1, encoding: 'o200k_base' }), RangeError);
  assert.throws(() => completeText({ text: 'abc', maxTokens: 1.5, encoding: 'o200k_base' }), RangeError);
});

test('a 150k-token cut of a very long text keeps every invariant', () => {
  const r = completeText({ text: LONG.repeat(150), maxTokens: 150_000, encoding: 'o200k_base' });
  assert.is(r.completionTokens, 150_000);
  checkPieces(r);
});

test.run();
