// npm run mutation [-- --write-docs]: plays every mutant of the contract against the conformance runner
// and prints the score, the equivalent mutants and any survivor; --write-docs puts the score into
// docs/conformance.md. Exit 1 when a mutant survives without being listed as equivalent.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../../src/lib/paths.js';
import { renderScore } from './report.js';
import { score } from './run.js';

const s = await score({ concurrency: 4 });
const text = renderScore(s);
process.stdout.write(`${text}\n`);
if (process.argv.includes('--write-docs')) {
  const file = join(ROOT, 'docs', 'conformance.md');
  const doc = readFileSync(file, 'utf8');
  const marked = /<!-- mutation-score -->\n[\s\S]*?<!-- end mutation-score -->/;
  if (!marked.test(doc)) throw new Error('docs/conformance.md has no <!-- mutation-score --> section');
  writeFileSync(file, doc.replace(marked, `<!-- mutation-score -->\n${text}<!-- end mutation-score -->`));
  process.stdout.write('docs/conformance.md updated\n');
}
process.exitCode = s.survivors.length || s.stale.length ? 1 : 0;
