import { createRequire } from 'node:module';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RankIndex } from '../../src/text/rankIndex.js';
import { readRanks } from '../../src/text/ranks.js';
import { RankTable } from '../../src/text/rankTable.js';
import { countTokens, decode, encode, encoderTables, type Encoding } from '../../src/text/tokenizer.js';

const requireCjs = createRequire(import.meta.url);
const ENCODINGS: readonly Encoding[] = ['o200k_base', 'cl100k_base'];

test('every text token of both tables is found at the id a Map filled in id order gives; other texts are not', () => {
  for (const enc of ENCODINGS) {
    const ranks = readRanks(enc);
    const index = new RankIndex(new RankTable(ranks));
    const map = new Map<string, number>();
    ranks.forEach((value, id) => typeof value === 'string' && map.set(value, id));
    assert.is(index.size, map.size, enc);
    for (const [text, id] of map)
      if (index.get(text) !== id)
        assert.unreachable(`${enc}: ${JSON.stringify(text)} found at ${index.get(text)}, not ${id}`);
    for (const text of ['', 'qzxvqzxvqzxv', ' hello world and more', 'hello\u0000', '\u{1f600}\u{1f600}\u{1f600}'])
      assert.is(index.get(text), map.get(text), `${enc}: ${JSON.stringify(text)}`);
  }
});

test('a text held twice keeps its last id, and byte tokens are left out', () => {
  const index = new RankIndex(new RankTable(['a', [0xff], 'b', 'a', 'ab', 'b\u00ff']));
  assert.is(index.size, 4);
  assert.is(index.get('a'), 3);
  assert.is(index.get('b'), 2);
  assert.is(index.get('\u00ff'), undefined);
  assert.is(index.get('ab'), 4);
  assert.is(index.get('b\u00ff'), 5);
  assert.is(index.get('b\u00fe'), undefined, 'same length, one unit apart');
  assert.is(index.get('abc'), undefined);
});

test('the encoders look texts up in the index; encode, count and decode as gpt-tokenizer’s own modules do', () => {
  for (const enc of ENCODINGS) {
    assert.instance(encoderTables(enc)!.bytePairStringRankEncoder, RankIndex, enc);
    const own = requireCjs(`gpt-tokenizer/encoding/${enc}`) as {
      encode(text: string, options: object): number[];
      countTokens(text: string, options: object): number;
      decode(tokens: number[]): string;
    };
    const words = fc.constantFrom(
      'hello',
      ' world',
      'Déjà',
      ' 日本語',
      '🎉',
      '\n\n',
      '   ',
      '1234567',
      "'s",
      ' `x => x * 2`',
      'antidisestablishmentarianism',
      '<|endoftext|>',
      '<|im_start|>',
      ' 誕生日',
      '\u{1d518}\u{1d52b}\u{1d526}',
      '👨‍👩‍👧‍👦',
      ' नमस्ते',
      ' مرحبا',
      'e\u0301',
      '\u{10ffff}',
    );
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 120 }),
      fc.array(words, { maxLength: 30 }).map((w) => w.join('')),
    );
    fc.assert(
      fc.property(text, (t) => {
        const tokens = encode(t, enc);
        assert.equal(tokens, own.encode(t, { disallowedSpecial: new Set() }));
        assert.is(countTokens(t, enc), own.countTokens(t, { disallowedSpecial: new Set() }));
        // Lone surrogates go in as U+FFFD's bytes (TextEncoder), so they come back as U+FFFD.
        assert.is(decode(tokens, enc), own.decode(tokens));
        assert.is(decode(tokens, enc), Buffer.from(t, 'utf8').toString('utf8'));
      }),
      { numRuns: 400, seed: 22 },
    );
  }
});

test.run();
