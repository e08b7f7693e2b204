import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRequire } from 'node:module';
import { hasLongRun, MAX_PIECE, slices } from '../../src/text/slices.js';
import { completeText } from '../../src/text/complete.js';
import { countTokens, decode, encode, type Encoding } from '../../src/text/tokenizer.js';

// The library itself, unsliced, as the reference.
const requireCjs = createRequire(import.meta.url);
const ORDINARY = { disallowedSpecial: new Set<string>() };
const library = (enc: Encoding) =>
  requireCjs(`gpt-tokenizer/encoding/${enc}`) as { encode(t: string, o: object): number[] };
const patterns = requireCjs('gpt-tokenizer/encodingParams/constants') as Record<string, RegExp>;
const SPLIT: Record<Encoding, RegExp> = {
  o200k_base: patterns.O200K_TOKEN_SPLIT_REGEX!,
  cl100k_base: patterns.CL100K_TOKEN_SPLIT_REGEX!,
};
const ENCODINGS: readonly Encoding[] = ['o200k_base', 'cl100k_base'];
const longestPiece = (text: string, enc: Encoding) =>
  Math.max(0, ...[...text.matchAll(SPLIT[enc])].map((m) => m[0].length));

function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}
const randomText = (n: number, pool: string, seed = 1): string => {
  const r = lcg(seed);
  const chars = [...pool];
  return Array.from({ length: n }, () => chars[Math.floor(r() * chars.length)]).join('');
};

const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(400);
const japanese =
  '吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。'.repeat(
    60,
  );
const base64 = Buffer.from(randomText(15_000, 'abcdefghijklmnopqrstuvwxyz0123456789 .,!?', 7)).toString('base64');
const url = `https://example.com/${Array.from({ length: 150 }, (_, i) => `segment${i}`).join('/')}?q=${'ab12'.repeat(100)}`;
const ORDINARY_TEXTS = {
  prose,
  japanese,
  base64,
  url,
  code: 'function f(x) {\n  return x * 2; // double\n}\n'.repeat(300),
};

test('ordinary text, even long and without spaces, is encoded whole: tokens identical to the unsliced library', () => {
  for (const [name, text] of Object.entries(ORDINARY_TEXTS)) {
    assert.ok(text.length > 2 * MAX_PIECE, name);
    for (const enc of ENCODINGS) {
      assert.equal(slices(text, SPLIT[enc]), [text], `${name} ${enc}`);
      assert.equal(encode(text, enc), library(enc).encode(text, ORDINARY), `${name} ${enc}`);
    }
  }
});

const PATHOLOGICAL = {
  letters: 'a'.repeat(100_000),
  spaces: ' '.repeat(100_000),
  newlines: `x.${'\n'.repeat(20_000)}y`,
  cjk: '日本語のテキストと中文文本混合在一起'.repeat(2_500),
  emoji: '😀'.repeat(10_000),
  oddEmoji: `!${'😀'.repeat(10_000)}`, // the pairs straddle every MAX_PIECE boundary
  punctuation: '!'.repeat(10_000) + '/'.repeat(10_000),
  embedded: `Hello there, ${'z'.repeat(5_000)} and goodbye.\n\n${'中'.repeat(3_000)}`,
  marks: `e${'\u0301'.repeat(5_000)}`,
};

test('a long run is handed to the encoder in slices: no piece over MAX_PIECE, parts join to the text, no split surrogate', () => {
  for (const [name, text] of Object.entries(PATHOLOGICAL)) {
    for (const enc of ENCODINGS) {
      assert.ok(longestPiece(text, enc) > MAX_PIECE, `${name} is a long piece for ${enc}`);
      const parts = slices(text, SPLIT[enc]);
      assert.ok(parts.length > 1, name);
      assert.is(parts.join(''), text, name);
      for (const part of parts) {
        assert.ok(longestPiece(part, enc) <= MAX_PIECE, `${name} ${enc}: piece of ${longestPiece(part, enc)}`);
        assert.not.ok(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(part), `${name}: surrogate pair split`);
      }
    }
  }
});

test('sliced text still round-trips exactly, countTokens agrees with encode, and streaming pieces join to the content', () => {
  for (const [name, text] of Object.entries(PATHOLOGICAL)) {
    for (const enc of ENCODINGS) {
      const tokens = encode(text, enc);
      assert.is(decode(tokens, enc), text, name);
      assert.is(countTokens(text, enc), tokens.length, name);
      const done = completeText({ text, encoding: enc, maxTokens: 700 });
      assert.is(done.pieces.map((p) => p.text).join(''), done.content, name);
      assert.is(
        done.pieces.reduce((n, p) => n + p.tokens, 0),
        done.completionTokens,
        name,
      );
    }
  }
});

test('counts of sliced runs stay within a fraction of a percent of the unsliced count', () => {
  const cases = {
    letters: randomText(20_000, 'abcdefghijklmnopqrstuvwxyz', 3),
    cjk: randomText(8_000, '日本語のテキストと中文文本混合在一起한국어', 5),
    same: 'a'.repeat(20_000),
  };
  for (const [name, text] of Object.entries(cases)) {
    for (const enc of ENCODINGS) {
      const exact = library(enc).encode(text, ORDINARY).length;
      const sliced = countTokens(text, enc);
      assert.ok(Math.abs(sliced - exact) / exact < 0.005, `${name} ${enc}: ${sliced} vs ${exact}`);
    }
  }
});

test('hasLongRun: runs of whitespace or of non-whitespace, at least min code units', () => {
  assert.is(hasLongRun('abc def', 4), false);
  assert.is(hasLongRun('abcd ef', 4), true);
  assert.is(hasLongRun('ab    cd', 4), true);
  assert.is(hasLongRun('ab\t\n\r cd', 4), true);
  assert.is(hasLongRun('a\u3000b\u00a0c\u2028d', 2), false);
  assert.is(hasLongRun('abc', 4), false);
  assert.is(hasLongRun('', 1), false);
});

test.run();
