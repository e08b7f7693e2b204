import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { allMutants } from './mutants.js';
import { renderScore } from './report.js';
import { runnerValues, score, type Score } from './run.js';

// The voice label patterns are shapes the API document only describes (should): their mutants are the mock's rules.
const voicePattern = (m: { id: string }) =>
  /^schema:(voice\.tts|cloud\.speech(@ssml)?):\/properties\/(voice_id|voice):pattern:/.test(m.id);

test('a mutant of a should shape is scored against the full profile, and killed there', async () => {
  const mutants = allMutants(runnerValues()).filter(voicePattern);
  assert.is(mutants.length, 3);
  assert.ok(mutants.every((m) => !m.documented));
  const s = await score({ concurrency: 2, only: voicePattern });
  assert.equal(
    s.results.map((r) => `${r.mutant.id} ${r.killed}`),
    mutants.map((m) => `${m.id} true`),
  );
});

test('the published table gives the document rules (must) and the mock own rules (full) apart', () => {
  const mutants = allMutants(runnerValues());
  const must = mutants.find((m) => m.family === 'schema' && m.documented);
  const own = mutants.find(voicePattern);
  const results = [
    { mutant: must!, killed: true, failed: [], code: 1 },
    { mutant: own!, killed: false, failed: [], code: 0 },
  ];
  const text = renderScore({
    results,
    killed: 1,
    total: 2,
    equivalent: [],
    gaps: [],
    survivors: [results[1]!],
    stale: [],
  } satisfies Score);
  assert.match(
    text,
    /Of the rules the API document states \(must, judged by the `documented` profile\): 1 of 1 killed \(100\.0%\)\. /,
  );
  assert.match(text, /\(should, judged by `full`\): 0 of 1 killed \(0\.0%\)\./);
  assert.match(text, /\n\| schema \| 1 \| 2 \| 1 \/ 1 \| 0 \/ 1 \|\n/);
});

test.run();
