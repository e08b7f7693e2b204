// The built-in profiles table of docs/load-testing.md is the catalogue's profiles with the figures summarize
// works out: this test writes the table it expects, and fails (printing it) when the page has another.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Catalogue } from '../../src/domain/catalogue.js';
import { summarize } from '../../src/domain/latency/distributions.js';
import type { Dist, Profile } from '../../src/domain/latency/types.js';
import { ROOT } from '../../src/lib/paths.js';
import { schemas } from '../support/index.js';

const round = (ms: number) => String(Math.round(ms));

/** A distribution as the docs write it, with its mean and p99 worked out. */
function cell(dist: Dist | undefined): string {
  if (dist === undefined) return '';
  const clamps = (d: { min?: number; max?: number }) =>
    `${d.min === undefined ? '' : `, min ${d.min}`}${d.max === undefined ? '' : `, max ${d.max}`}`;
  const shape =
    typeof dist === 'number'
      ? `fixed ${dist}`
      : dist.type === 'fixed'
        ? `fixed ${dist.ms}`
        : dist.type === 'uniform'
          ? `uniform ${dist.lower}–${dist.upper}`
          : dist.type === 'normal'
            ? `normal ${dist.mean} sd ${dist.sd}${clamps(dist)}`
            : `lognormal median ${dist.median} σ ${dist.sigma}${clamps(dist)}`;
  const { mean, p99 } = summarize(dist);
  return `${shape}: **${round(mean)}** / ${round(p99)}`;
}

/** The table of the built-in profiles, as docs/load-testing.md has it. */
function profilesTable(profiles: ReadonlyMap<string, Profile>): string {
  const rows = [...profiles].map(([name, p]) =>
    [
      `\`${name}\``,
      cell(p.ttft),
      p.prefillMsPerToken === undefined ? '' : String(p.prefillMsPerToken),
      cell(p.interToken),
      cell(p.duration),
      p.maxRunning === undefined ? '' : `${p.maxRunning} / ${p.maxWaiting ?? 0}`,
      String(p.loadFactor ?? 1),
    ].join(' | '),
  );
  return [
    '| Profile | Time to first token | Prefill (ms a prompt token) | Gap between tokens | Duration (media) | Running / waiting | Load factor |',
    '|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n');
}

test('the built-in profiles table of docs/load-testing.md is the catalogue with its worked-out figures', () => {
  const expected = profilesTable(new Catalogue(schemas()).profiles);
  const page = readFileSync(join(ROOT, 'docs', 'load-testing.md'), 'utf8');
  assert.ok(page.includes(`${expected}\n`), `docs/load-testing.md should hold this table:\n\n${expected}\n`);
});

test.run();
