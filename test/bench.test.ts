import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  beforeRatio,
  besideRatio,
  combine,
  compare,
  floorRows,
  linearity,
  logCost,
  metricsCost,
  markdownTable,
  median,
  percentile,
  ratio,
  table,
  type LoadFigures,
} from '../bench/report.js';
import { ownerOf, shortUrl, summarise, type CpuProfile } from '../bench/cpuprofile.js';
import { conversation, paddedPng, text } from '../bench/scenarios.js';
import type { BenchResults } from '../bench/results.js';
import { verdicts } from '../bench/targets.js';
import { referenceScript, startNodeFlags, startReference } from '../bench/servers.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readImageInfo } from '../src/media/imageInfo.js';

const figures = (reqPerSec: number, p99Ms: number, peakRssMiB: number | null): LoadFigures => ({
  reqPerSec,
  p50Ms: p99Ms / 2,
  p99Ms,
  meanMs: p99Ms / 2,
  peakRssMiB,
  cpuUsPerReq: 1e6 / reqPerSec,
  responses: 1,
  unexpected: 0,
});

test('percentile uses the nearest rank of a sorted sample', () => {
  const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.is(percentile(sorted, 0.5), 50);
  assert.is(percentile(sorted, 0.99), 99);
  assert.is(percentile(sorted, 1), 100);
  assert.is(percentile([7], 0.99), 7);
  assert.ok(Number.isNaN(percentile([], 0.5)));
});

test('median of odd and even samples, unsorted input', () => {
  assert.is(median([3, 1, 2]), 2);
  assert.is(median([4, 1, 3, 2]), 2.5);
});

test('ratio is null when the divisor is missing or not positive', () => {
  assert.is(ratio(21, 42), 0.5);
  assert.is(ratio(1, 0), null);
  assert.is(ratio(null, 3), null);
  assert.is(ratio(3, undefined), null);
});

test('compare divides the mock by the baseline, figure by figure', () => {
  const r = compare(figures(20_000, 6, 90), figures(40_000, 3, 45));
  assert.equal(r, { reqPerSec: 0.5, p50: 2, p99: 2, peakRss: 2, cpuPerReq: 0.5 });
  assert.is(compare(figures(1, 1, null), null).reqPerSec, null);
});

test('combine takes the median of each figure, the highest peak RSS and the sum of counts', () => {
  const c = combine([figures(100, 4, 50), figures(300, 2, 70), figures(200, 9, null)]);
  assert.is(c.reqPerSec, 200);
  assert.is(c.p99Ms, 4);
  assert.is(c.peakRssMiB, 70);
  assert.is(c.responses, 3);
  assert.is(combine([figures(1, 1, null)]).peakRssMiB, null);
});

test('linearity: equal cost per unit is 1, a quadratic step shows above it', () => {
  assert.equal(linearity(1, 2, 2), { costRatio: 2, perUnit: 1 });
  assert.is(linearity(1, 100 * 100, 100).perUnit, 100);
});

test('table aligns columns; markdown has a separator row', () => {
  const rows = [
    ['name', 'n'],
    ['chat', '12'],
    ['x', '3'],
  ];
  assert.is(table(rows), 'name   n\n----  --\nchat  12\nx      3');
  assert.is(markdownTable(rows).split('\n')[1], '| --- | ---: |');
});

test('verdicts apply the issue targets to the ratios of the same run', () => {
  const results: BenchResults = {
    machine: {},
    options: {},
    scenarios: [
      {
        name: 'chat',
        title: 'chat',
        baseline: figures(100, 1, 50),
        mock: figures(46, 2, 140),
        ratio: compare(figures(46, 2, 140), figures(100, 1, 50)),
        floor: figures(50, 1, 80),
        silent: figures(50, 2, 140),
        aimock: figures(20, 5, 90),
      },
      {
        name: 'chat-401',
        title: '401',
        baseline: figures(100, 1, 50),
        mock: figures(69, 4, 151),
        ratio: compare(figures(69, 4, 151), figures(100, 1, 50)),
        floor: figures(100, 1, 80),
        silent: figures(100, 1, 151),
      },
    ],
    streams: { mock: { count: 1000, completed: 999, seconds: 1, peakRssMiB: 200 }, baseline: null },
  };
  const met = Object.fromEntries(verdicts(results).map((v) => [v.target, v.met]));
  assert.is(met['chat: req/s, default log / stack floor'], true);
  assert.is(met['chat: req/s, default log / aimock'], true);
  assert.is(met['chat: cost of the request log (req/s, default vs silent)'], true);
  assert.is(met['401: cost of the request log (req/s, default vs silent)'], false);
  assert.is(met['chat: p99, default log / stack floor'], true);
  assert.is(met['401: p99, default log / stack floor'], false);
  assert.is(met['chat: p99 ratio to bare node:http'], true);
  assert.is(met['401: p99 ratio to bare node:http'], false);
  assert.is(met['401: peak RSS'], false);
  assert.is(met['1000 concurrent streams complete'], false);
  assert.is(met['1000 concurrent streams: peak RSS'], true);
});

/** A chat scenario's result without the mock's figures or those beside it. */
const chatBase = {
  name: 'chat',
  title: 'chat',
  baseline: figures(100, 1, 50),
  ratio: compare(figures(46, 2, 140), figures(100, 1, 50)),
};

test("comparisons beside the mock are the medians of the rounds' ratios, where the run kept them", () => {
  const base = chatBase;
  // The medians of the figures say: 0.77x the floor (not met), a log costing 8% (met); the rounds, each
  // two servers measured seconds apart, say 0.93x and 12%.
  const s = {
    ...base,
    mock: figures(46, 2, 140),
    floor: figures(60, 1, 80),
    silent: figures(50, 2, 140),
    aimock: figures(20, 5, 90),
  };
  assert.is(besideRatio(s, 'floor')!.toFixed(3), (46 / 60).toFixed(3));
  assert.is(logCost(s)!.toFixed(3), '0.080');
  const paired = { ...s, paired: { floor: [0.95, 0.8, 0.93], silent: [0.9, 0.85, 0.88], aimock: [2.1, 2.5, 2.2] } };
  assert.is(besideRatio(paired, 'floor'), 0.93);
  assert.is(besideRatio(paired, 'aimock'), 2.2);
  assert.is(logCost(paired)!.toFixed(3), '0.120');
  const met = Object.fromEntries(verdicts({ machine: {}, options: {}, scenarios: [paired] }).map((v) => [v.target, v]));
  assert.equal(
    [met['chat: req/s, default log / stack floor']!.met, met['chat: req/s, default log / stack floor']!.value],
    [true, '0.93x'],
  );
  assert.equal(
    [
      met['chat: cost of the request log (req/s, default vs silent)']!.met,
      met['chat: cost of the request log (req/s, default vs silent)']!.value,
    ],
    [false, '12.0%'],
  );
  // The printed table shows the same figures as the verdicts.
  const row = floorRows([paired])![1]!;
  assert.ok(row.includes('0.93x') && row.includes('2.20x') && row.includes('12.0%'), row.join(' | '));
});

test('--before: the build before meets or misses its own targets against the same floor and aimock, round by round', () => {
  const s = {
    ...chatBase,
    mock: figures(46, 2, 140),
    floor: figures(50, 1, 80),
    aimock: figures(20, 5, 90),
    before: figures(44, 2, 140),
    paired: { floor: [0.92, 0.91, 0.95], aimock: [2.3, 2.2, 2.4], before: [1.05, 1.02, 1.08] },
    // The medians of the figures would say 0.88x the floor; the rounds say 0.89x: not met, where this build's 0.92x is.
    beforePaired: { floor: [0.89, 0.87, 0.9], aimock: [1.4, 1.6, 1.55] },
  };
  assert.is(beforeRatio(s, 'floor'), 0.89);
  assert.is(beforeRatio({ ...s, beforePaired: undefined }, 'floor'), 44 / 50);
  const met = Object.fromEntries(verdicts({ machine: {}, options: {}, scenarios: [s] }).map((v) => [v.target, v]));
  assert.equal(
    [met['chat: req/s, build before / stack floor']!.met, met['chat: req/s, build before / stack floor']!.value],
    [false, '0.89x'],
  );
  assert.equal(
    [met['chat: req/s, build before / aimock']!.met, met['chat: req/s, build before / aimock']!.value],
    [true, '1.55x'],
  );
  assert.is(met['chat: req/s, default log / stack floor']!.met, true);
  // Without --before there are no such rows.
  const without = verdicts({ machine: {}, options: {}, scenarios: [{ ...s, before: undefined }] });
  assert.not.ok(without.some((v) => v.target.includes('build before')));
  const [head, row] = floorRows([s])!;
  assert.is(row![head!.indexOf('mock/before')], '1.05x');
  assert.is(row![head!.indexOf('before/floor')], '0.89x');
  assert.match(row![head!.indexOf('build before')]!, /^44 \(/);
  // Without it, the table has no such columns.
  const [plainHead, plainRow] = floorRows([{ ...s, before: undefined }])!;
  assert.not.ok(
    plainHead!.some((h) => h.includes('before')),
    plainHead!.join(' | '),
  );
  assert.is(plainRow!.length, plainHead!.length);
});

test('the cost of the metrics is the mock against itself with --metrics off, in the same run', () => {
  const s = { ...chatBase, mock: figures(46, 2, 140), unmetered: figures(48, 2, 140) };
  assert.is(metricsCost(s)!.toFixed(3), (1 - 46 / 48).toFixed(3));
  assert.is(metricsCost({ ...s, paired: { unmetered: [0.97, 0.99, 0.95] } })!.toFixed(3), '0.030');
  assert.is(metricsCost({ ...s, unmetered: undefined }), null);
  const [head, row] = floorRows([{ ...s, paired: { unmetered: [0.97, 0.99, 0.95] } }])!;
  const at = head!.indexOf('metrics cost');
  assert.ok(at > 0, head!.join(' | '));
  assert.is(row![at], '3.0%');
  assert.match(row![head!.indexOf('mock, --metrics off')]!, /^48 \(/);
});

test("the mock is started with the node flags of package.json's start script, read from it", () => {
  assert.equal(startNodeFlags('node dist/cli/main.js serve'), []);
  assert.equal(startNodeFlags('node --max-semi-space-size=8 --trace-gc dist/cli/main.js serve'), [
    '--max-semi-space-size=8',
    '--trace-gc',
  ]);
  assert.throws(() => startNodeFlags('tsx src/cli/main.ts serve'), /start script/);
  assert.throws(() => startNodeFlags('node --flag other.js'), /start script/);
  const own = startNodeFlags();
  assert.ok(own.length > 0 && own.every((f) => f.startsWith('--')), `package.json's start flags: ${own.join(' ')}`);
});

test('request builders: exact text length, conversations end with a user turn', () => {
  assert.is(text(2500).length, 2500);
  const c = conversation(10);
  assert.is(c.length, 10);
  assert.is(c[9]!.role, 'user');
  assert.is(c[8]!.role, 'assistant');
});

test('paddedPng is exactly the size asked for and still reads as 1024x1024', () => {
  const png = paddedPng(200_000);
  assert.is(png.length, 200_000);
  assert.equal(readImageInfo(png), { width: 1024, height: 1024, format: 'png' });
});

test('summarise sums self time per function and owner, and drops samples before `since`', () => {
  const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber });
  const profile: CpuProfile = {
    startTime: 1000,
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2] },
      { id: 2, callFrame: frame('handle', 'file:///app/dist/middleware/handle.js', 3), children: [3] },
      { id: 3, callFrame: frame('parse', 'file:///app/node_modules/@hapi/bourne/lib/index.js', 8) },
    ],
    samples: [3, 3, 2, 3],
    timeDeltas: [10, 10, 10, 30],
  };
  const all = summarise(profile, '/app');
  assert.is(all.totalMicros, 60);
  assert.equal(
    all.functions.map((f) => [f.key, f.micros]),
    [
      ['parse @hapi/bourne/lib/index.js:9', 50],
      ['handle dist/middleware/handle.js:4', 10],
    ],
  );
  assert.equal(
    all.owners.map((o) => o.key),
    ['@hapi/bourne', 'dist/middleware/handle.js'],
  );
  assert.equal(
    all.inclusive.map((f) => [f.key, f.micros]),
    [['handle dist/middleware/handle.js:4', 60]],
  );
  assert.is(summarise(profile, '/app', 30, 1025).totalMicros, 40); // the first two samples end at 1010 and 1020
});

test('shortUrl and ownerOf name project files and packages', () => {
  assert.is(shortUrl('file:///w/node_modules/koa/lib/response.js', '/w'), 'koa/lib/response.js');
  assert.is(shortUrl('file:///w/dist/app.js', '/w'), 'dist/app.js');
  assert.is(ownerOf('koa/lib/response.js', 'set'), 'koa');
  assert.is(ownerOf('@koa/router/dist/index.mjs', 'match'), '@koa/router');
  assert.is(ownerOf('node:events', 'emit'), 'node: internals');
  assert.is(ownerOf('', '(garbage collector)'), '((garbage collector))');
});

test('the reference servers the bench transpiles run as programs: each listens and answers', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'uam-bench-test-'));
  try {
    for (const name of ['baseline', 'floor'] as const) {
      const fixed = { status: 200, contentType: 'application/json', stream: false, body: Buffer.from('{"ok":true}') };
      const server = await startReference(null, referenceScript(name), dir, name, fixed);
      try {
        const res = await fetch(`${server.url}/v1/text-provider/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer sk-mock-default' },
          body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
        });
        assert.is(res.status, 200, name);
        assert.is(await res.text(), '{"ok":true}', name);
      } finally {
        await server.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
