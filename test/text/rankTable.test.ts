import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readRanks, type Ranks } from '../../src/text/ranks.js';
import { RankTable } from '../../src/text/rankTable.js';
import { buildEncoder, encoderTables, rankTable, type Encoding } from '../../src/text/tokenizer.js';

const ENCODINGS: readonly Encoding[] = ['o200k_base', 'cl100k_base'];

test('every token of both tables reads back from the compact table as the array holds it', () => {
  for (const enc of ENCODINGS) {
    const ranks = readRanks(enc);
    const table = new RankTable(ranks);
    assert.is(table.length, ranks.length, enc);
    for (let id = 0; id < ranks.length; id++) {
      const value = ranks[id]!;
      const same =
        typeof value === 'string'
          ? table.text(id) === value && table.isText(id) && table.bytes(id) === undefined
          : table.text(id) === undefined && table.isBytes(id) && table.bytes(id)!.join() === value.join();
      if (!same) assert.unreachable(`${enc}: token ${id} reads back as ${JSON.stringify(table.at(id))}`);
    }
    for (const id of [-1, ranks.length, 1.5, 10_000_000]) assert.is(table.at(id), undefined, `${enc}: ${id}`);
  }
});

test('holes read back as nothing; an empty token is refused', () => {
  const table = new RankTable(['ab', undefined, [0xe6, 0x97], 'c']);
  assert.equal(
    [0, 1, 2, 3].map((id) => table.at(id)),
    ['ab', undefined, [0xe6, 0x97], 'c'],
  );
  assert.is(table.isText(1) || table.isBytes(1), false);
  assert.throws(() => new RankTable(['a', '']), /token 1 of the rank table is empty/);
  assert.throws(() => new RankTable([[]]), /token 0 of the rank table is empty/);
});

test('the face given to the library reads as the array did', () => {
  for (const enc of ENCODINGS) {
    const ranks = readRanks(enc);
    const face = encoderTables(enc)!.bytePairRankDecoder!;
    assert.is.not(face, ranks, enc);
    assert.is(face.length, ranks.length, enc);
    for (let id = 0; id < ranks.length; id++)
      if (JSON.stringify(face[id]) !== JSON.stringify(ranks[id])) assert.unreachable(`${enc}: token ${id}`);
    assert.is(face[ranks.length], undefined);
    assert.is(rankTable(enc).length, ranks.length);
  }
});

test('the encoder is built over the byte tokens alone, not a Map of every text', () => {
  for (const enc of ENCODINGS) {
    const table = rankTable(enc);
    let bytes = 0;
    for (let id = 0; id < table.length; id++) if (table.isBytes(id)) bytes++;
    const core = encoderTables(enc) as { mergeableBytePairRankCount?: number };
    assert.ok(bytes > 500, enc);
    assert.is(core.mergeableBytePairRankCount, bytes, enc);
  }
});

test('once the encoder is built, nothing holds the array of token texts it was built over', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  let array: WeakRef<Ranks> | undefined;
  let built: ReturnType<typeof buildEncoder> | undefined;
  (() => {
    // A copy: without the build's JSON copy, readRanks gives the package module's array, which require's cache keeps.
    const ranks = structuredClone(readRanks('cl100k_base'));
    array = new WeakRef(ranks);
    built = buildEncoder('cl100k_base', ranks);
  })();
  // A WeakRef holds its target until the current job ends.
  await new Promise(setImmediate);
  gc();
  assert.is(array!.deref(), undefined, 'the array is garbage');
  assert.equal(built!.api.encode('hello world', {}), [15339, 1917], 'and the encoder still encodes');
});

test.run();
