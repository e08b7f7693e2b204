// What a request may send, what the journal keeps of it, what a message quotes of it, what the validating
// proxy's report keeps, how many fault rules and latency profiles are held, how long the health check waits on Redis, how
// many may follow the journal's feed and how the client check tells a burst are set in one place, the requests,
// records, messages, proxyReport, faults, latencyProfiles, state, feeds and clientCheck fields of fixtures/limits.json. The documents may state those figures for the reader, but name the field beside
// each: a figure stated beside a field's name must be that field's value, so the prose cannot drift from
// the file.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { operations } from '../../src/contract/operations.js';
import { loadLimits } from '../../src/domain/limits.js';
import { ROOT } from '../../src/lib/paths.js';

// The groups whose every field is a bound a user can see, by `group.field`.
const GROUPS = [
  'requests',
  'records',
  'messages',
  'proxyReport',
  'faults',
  'latencyProfiles',
  'state',
  'feeds',
  'clientCheck',
] as const;
const limits = loadLimits();
/** The numbers of a field that maps names to bounds, or to ranges (faults.bounds, by fault kind). */
const numbersIn = (value: object): number[] =>
  Object.values(value).flatMap((v: unknown) => (typeof v === 'number' ? [v] : numbersIn(v as object)));
// A field that maps names to bounds (requests.maxBodyBytes, by operation) stands for its distinct values.
const bounds = new Map<string, number[]>(
  GROUPS.flatMap((g) =>
    Object.entries(limits[g]).map(([field, value]): [string, number[]] => [
      `${g}.${field}`,
      typeof value === 'number' ? [value] : [...new Set(numbersIn(value))],
    ]),
  ),
);
// A bound is named `group.field`, the field in camelCase (`messages.0.content`, a chat body's path, is not one).
const NAMED = new RegExp(`(?<![\\w./-])(?:${GROUPS.join('|')})\\.[a-z]+[A-Z]\\w*`, 'g');

/** The ways a document may write `value`: 8192, 100,000, 8 KiB, 32 MiB. */
function spellings(value: number): string[] {
  const out = [String(value)];
  if (value >= 10_000) out.push(value.toLocaleString('en-US'));
  if (value % 1024 === 0) out.push(`${value / 1024} KiB`);
  if (value % (1024 * 1024) === 0) out.push(`${value / (1024 * 1024)} MiB`);
  return out;
}

/** A document's blocks: each table row, list item, heading or paragraph (its wrapped lines joined). */
function blocksOf(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  const end = () => {
    if (current.length) blocks.push(current.join(' '));
    current = [];
  };
  for (const line of text.split('\n')) {
    if (!line.trim() || /^\s*(\||[-*] |#|\d+\. )/.test(line)) end();
    if (line.trim()) current.push(line.trim());
    if (line.trimStart().startsWith('|')) end();
  }
  end();
  return blocks;
}

/** Each block of docs/*.md and README.md that names a bound (`records.<field>`, ...), and the descriptions of the
 * operations table. */
function namingBlocks(): { where: string; block: string }[] {
  const files = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const out: { where: string; block: string }[] = [];
  for (const file of files)
    for (const block of blocksOf(readFileSync(join(ROOT, file), 'utf8'))) out.push({ where: file, block });
  for (const op of operations)
    if (op.doc.description) out.push({ where: `operation ${op.id}`, block: op.doc.description });
  return out.filter(({ block }) => block.match(NAMED));
}

test(`a figure stated beside a field of ${GROUPS.join(', ')} in fixtures/limits.json is that field's value`, () => {
  let checked = 0;
  for (const { where, block } of namingBlocks()) {
    for (const [name] of block.matchAll(NAMED)) {
      const values = bounds.get(name);
      assert.ok(values, `${where} names ${name}, which fixtures/limits.json does not have`);
      for (const value of values!) {
        const stated = spellings(value).some((s) =>
          new RegExp(`(?<![\\d.,])${s.replace(' ', '\\s+')}(?![\\d.]|,\\d)`).test(block),
        );
        assert.ok(
          stated,
          `${where} names ${name} but does not state its value (${spellings(value).join(' or ')}):\n${block}`,
        );
      }
      checked++;
    }
  }
  assert.ok(checked >= bounds.size, `the check found the fields named (${checked})`);
});

test('every requests, records, messages and proxyReport field of fixtures/limits.json is named in the documents', () => {
  const text = namingBlocks()
    .map(({ block }) => block)
    .join('\n');
  for (const name of bounds.keys()) assert.ok(text.includes(name), `no document names ${name}`);
});

test.run();
