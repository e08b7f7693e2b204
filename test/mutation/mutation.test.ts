import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../../src/lib/paths.js';
import { renderScore, scoreOf } from './report.js';
import { score, type Score } from './run.js';

// One run of every mutant (about 40 s on two busy cores): the tests below read the same score.
let result: Score | undefined;
const scored = async (): Promise<Score> => (result ??= await score({ concurrency: 4 }));

test('every mutant of the contract is killed by the suite, naming the rule, or listed as equivalent or as a known gap, with its reason', async () => {
  const s = await scored();
  const gaps = s.survivors.map(
    (r) =>
      `${r.mutant.id} (${r.mutant.rule}; runner exit ${r.code}, failed: ${r.failed.slice(0, 5).join(', ') || 'nothing'})`,
  );
  assert.equal(
    gaps,
    [],
    `surviving mutants: add a case that kills each, or list it in test/mutation/equivalent.json: as equivalent, with the reason no request can tell it apart, or as a gap, with what would catch it:\n${gaps.join('\n')}`,
  );
  assert.equal(
    s.stale,
    [],
    'listed as equivalent or as a gap but killed: remove them from test/mutation/equivalent.json',
  );
});

test('the score is at least 98%, and there are mutants of every family', async () => {
  const s = await scored();
  assert.ok(scoreOf(s) >= 0.98, `${s.killed}/${s.total - s.equivalent.length}`);
  const families = new Set(s.results.map((r) => r.mutant.family));
  assert.equal([...families].sort(), ['auth', 'body', 'catalogue', 'coerce', 'ignore', 'path', 'schema', 'status']);
  assert.ok(s.total > 400, `${s.total} mutants`);
});

test('docs/conformance.md publishes this score and the equivalent list (npm run mutation -- --write-docs)', async () => {
  const doc = readFileSync(join(ROOT, 'docs', 'conformance.md'), 'utf8');
  const section = /<!-- mutation-score -->\n([\s\S]*?)<!-- end mutation-score -->/.exec(doc)?.[1];
  assert.ok(section, 'docs/conformance.md has no mutation-score section');
  assert.fixture(section, renderScore(await scored()));
});

test.run();
