// docs/load-testing.md lists every metric GET /metrics serves; fixtures/metrics.json is where they are defined. The
// table's names, vLLM names, types and labels must be the file's, row for row, so the page cannot drift from it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { packageMetrics } from '../../src/domain/metrics/table.js';
import { ROOT } from '../../src/lib/paths.js';

/** The rows of the first table under `## Metrics`, as cells. */
function docRows(): string[][] {
  const text = readFileSync(join(ROOT, 'docs', 'load-testing.md'), 'utf8');
  const section = text.slice(text.indexOf('\n## Metrics\n'));
  assert.ok(section.length > 1, 'docs/load-testing.md has no "## Metrics" section');
  const lines = section.split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const table: string[] = [];
  for (let i = first; i < lines.length && lines[i]!.startsWith('|'); i++) table.push(lines[i]!);
  // The head and its rule line, then one row per metric.
  return table.slice(2).map((row) =>
    row
      .slice(1, -1)
      .split(' | ')
      .map((c) => c.trim()),
  );
}

const codes = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

test('the docs list every metric of fixtures/metrics.json, with its vLLM name, type and labels', () => {
  const rows = docRows();
  const table = packageMetrics().metrics;
  assert.equal(
    rows.map((r) => codes(r[0]!)[0]),
    table.map((m) => m.name),
    'the same metrics, in the same order',
  );
  table.forEach((m, i) => {
    const [, vllm, type, labels] = rows[i]!;
    assert.equal(codes(vllm!), m.vllm ? [m.vllm.name] : [], `${m.name}: vLLM's name`);
    assert.is(type, m.type, `${m.name}: type`);
    const [own, theirs] = labels!.split('(vLLM:');
    assert.equal(codes(own!), [...m.labels], `${m.name}: labels`);
    assert.equal(codes(theirs ?? ''), [...(m.vllm?.labels ?? [])], `${m.name}: vLLM's labels`);
  });
});

test.run();
