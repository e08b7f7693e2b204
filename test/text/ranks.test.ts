import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readRanks, writeRanks } from '../../src/text/ranks.js';

const requireCjs = createRequire(import.meta.url);
const packageTable = (enc: string) => (requireCjs(`gpt-tokenizer/bpeRanks/${enc}`) as { default: unknown[] }).default;

const dir = mkdtempSync(join(tmpdir(), 'ranks-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test('the JSON copy written by the build reads back as the package table, entry for entry', () => {
  assert.equal(writeRanks(['cl100k_base'], dir), [join(dir, 'cl100k_base.json')]);
  const copy = readRanks('cl100k_base', dir);
  assert.is.not(copy, packageTable('cl100k_base'), 'read from the copy, not the module');
  assert.equal(copy, packageTable('cl100k_base'));
  assert.ok(
    copy.some((v) => Array.isArray(v)),
    'byte tokens survive as arrays',
  );
});

test('without a current copy, the package module is read', () => {
  assert.is(readRanks('o200k_base', dir), packageTable('o200k_base'), 'no file');
  const file = join(dir, 'cl100k_base.json');
  writeFileSync(file, readFileSync(file, 'utf8').replace(/^\{"version":"[^"]+"/, '{"version":"0.0.0"'));
  assert.is(readRanks('cl100k_base', dir), packageTable('cl100k_base'), 'another version of the package');
});

test.run();
