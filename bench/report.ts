/** Pure helpers of the benchmark: statistics, ratios, target verdicts and the printed tables. */

import type { Beside, LoadFigures, PacedFigures, Ratios, ScenarioResult } from './results.js';

export type { Beside, LoadFigures, Ratios, ScenarioResult } from './results.js';

/**
 * The mock's req/s over a server measured beside it: the median of the rounds' ratios where the run kept
 * them, else the ratio of the two medians (a run saved by an earlier bench).
 */
export function besideRatio(s: ScenarioResult, who: Beside): number | null {
  const rounds = s.paired?.[who];
  if (rounds?.length) return median([...rounds]);
  return ratio(s.mock.reqPerSec, s[who]?.reqPerSec);
}

/** The build before's (`--before`) req/s over the floor's or aimock's: the median of the rounds' ratios. */
export function beforeRatio(s: ScenarioResult, who: 'floor' | 'aimock'): number | null {
  const rounds = s.beforePaired?.[who];
  return rounds?.length ? median([...rounds]) : ratio(s.before?.reqPerSec, s[who]?.reqPerSec);
}

/** What logging every request costs: 1 - req/s with the default log over req/s with logging off. */
export function logCost(s: ScenarioResult): number | null {
  const r = besideRatio(s, 'silent');
  return r === null ? null : 1 - r;
}

/** What keeping the metrics (GET /metrics) costs: 1 - req/s of the mock over req/s with `--metrics off`. */
export function metricsCost(s: ScenarioResult): number | null {
  const r = besideRatio(s, 'unmetered');
  return r === null ? null : 1 - r;
}

/** The value at quantile q (0..1) of an ascending-sorted sample, by the nearest-rank method. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** The arithmetic mean; NaN for an empty sample. */
export function mean(values: ArrayLike<number>): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]!;
  return sum / values.length;
}

/** The median of a sample (sorted copy); NaN when empty. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The median of each figure over rounds (the highest peak RSS), so one disturbed round does not decide. */
export function combine(rounds: readonly LoadFigures[]): LoadFigures {
  const m = (f: (x: LoadFigures) => number) => median(rounds.map(f));
  const rss = rounds.map((r) => r.peakRssMiB).filter((r): r is number => r !== null);
  return {
    reqPerSec: m((r) => r.reqPerSec),
    p50Ms: m((r) => r.p50Ms),
    p99Ms: m((r) => r.p99Ms),
    meanMs: m((r) => r.meanMs),
    peakRssMiB: rss.length ? Math.max(...rss) : null,
    cpuUsPerReq: rounds.every((r) => r.cpuUsPerReq !== null) ? m((r) => r.cpuUsPerReq!) : null,
    responses: rounds.reduce((n, r) => n + r.responses, 0),
    unexpected: rounds.reduce((n, r) => n + r.unexpected, 0),
  };
}

/**
 * The median of each paced figure over rounds, so one round disturbed by the host does not decide; the counts that
 * judge completeness take the worst round (fewest streams complete, most failed or in error, errors summed by code),
 * and the peak RSS the highest.
 */
export function combinePaced(rounds: readonly PacedFigures[]): PacedFigures {
  if (rounds.length === 1) return rounds[0]!;
  const m = (f: (x: PacedFigures) => number) => median(rounds.map(f));
  const orNull = (f: (x: PacedFigures) => number | null) =>
    rounds.every((r) => f(r) !== null) ? median(rounds.map((r) => f(r)!)) : null;
  const rss = rounds.map((r) => r.peakRssMiB).filter((r): r is number => r !== null);
  const errorCodes: Record<string, number> = {};
  for (const r of rounds)
    for (const [code, n] of Object.entries(r.errorCodes)) errorCodes[code] = (errorCodes[code] ?? 0) + n;
  return {
    streams: rounds[0]!.streams,
    completed: Math.min(...rounds.map((r) => r.completed)),
    failed: Math.max(...rounds.map((r) => r.failed)),
    errors: Math.max(...rounds.map((r) => r.errors)),
    errorCodes,
    tokens: m((r) => r.tokens),
    latenessP50Ms: m((r) => r.latenessP50Ms),
    latenessP99Ms: m((r) => r.latenessP99Ms),
    latenessMaxMs: m((r) => r.latenessMaxMs),
    firstTokenP99Ms: m((r) => r.firstTokenP99Ms),
    gaps: m((r) => r.gaps),
    cpuSeconds: orNull((r) => r.cpuSeconds),
    cpuUsPerToken: orNull((r) => r.cpuUsPerToken),
    peakRssMiB: rss.length ? Math.max(...rss) : null,
    seconds: m((r) => r.seconds),
    client: { cpuShare: m((r) => r.client.cpuShare), loopDelayP99Ms: m((r) => r.client.loopDelayP99Ms) },
    coreOtherSeconds: orNull((r) => r.coreOtherSeconds),
  };
}

/** The mock's paced-streams figures against the floor's: each the median of the rounds' own comparisons. */
export interface PacedRatios {
  /** Token lateness p99, mock / floor. */
  readonly lateness: number | null;
  /** First-token lateness p99, mock / floor. */
  readonly firstToken: number | null;
  /** Server CPU per token, mock / floor. */
  readonly cpu: number | null;
  /** Peak RSS, mock - floor, in MiB. */
  readonly rssOverMiB: number | null;
}

/**
 * The mock against the floor in the paced streams: per round (the two measured seconds apart) where the run kept its
 * rounds, then the median over rounds; else from the combined figures (a run saved by an earlier bench).
 */
export function pacedRatios(p: { floor: PacedFigures; mock: PacedFigures; perRound?: PacedRoundsOf }): PacedRatios {
  const pairs = p.perRound?.mock.length
    ? p.perRound.mock.map((mock, i) => ({ mock, floor: p.perRound!.floor[i]! })).filter((x) => x.floor !== undefined)
    : [{ mock: p.mock, floor: p.floor }];
  const of = (f: (m: PacedFigures, fl: PacedFigures) => number | null): number | null => {
    const all = pairs.map(({ mock, floor }) => f(mock, floor));
    return all.every((x) => x !== null) && all.length ? median(all as number[]) : null;
  };
  return {
    lateness: of((m, f) => ratio(m.latenessP99Ms, f.latenessP99Ms)),
    firstToken: of((m, f) => ratio(m.firstTokenP99Ms, f.firstTokenP99Ms)),
    cpu: of((m, f) => ratio(m.cpuUsPerToken, f.cpuUsPerToken)),
    rssOverMiB: of((m, f) => (m.peakRssMiB === null || f.peakRssMiB === null ? null : m.peakRssMiB - f.peakRssMiB)),
  };
}

type PacedRoundsOf = { readonly floor: readonly PacedFigures[]; readonly mock: readonly PacedFigures[] };

/** a / b, or null when either is missing or b is not a positive number. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b <= 0) return null;
  return a / b;
}

/** Ratios of the mock's figures to the baseline's (req/s higher is better; latency and RSS lower is better). */
export function compare(mock: LoadFigures, baseline: LoadFigures | null): Ratios {
  return {
    reqPerSec: ratio(mock.reqPerSec, baseline?.reqPerSec),
    p50: ratio(mock.p50Ms, baseline?.p50Ms),
    p99: ratio(mock.p99Ms, baseline?.p99Ms),
    peakRss: ratio(mock.peakRssMiB, baseline?.peakRssMiB),
    // Inverted so that it reads like the req/s ratio: the share of the baseline's efficiency.
    cpuPerReq: ratio(baseline?.cpuUsPerReq, mock.cpuUsPerReq),
  };
}

/**
 * Cost per unit of work of the larger request relative to the smaller one: 1 means the extra work
 * costs exactly as much per unit; a quadratic step shows as a value well above 1.
 */
export function linearity(smallMs: number, largeMs: number, workRatio: number): { costRatio: number; perUnit: number } {
  const costRatio = largeMs / smallMs;
  return { costRatio, perUnit: costRatio / workRatio };
}

/** Formats a number with a fixed count of decimals, or '-' when missing. */
export function fmt(n: number | null | undefined, decimals = 0): string {
  if (n == null || !Number.isFinite(n)) return '-';
  return n.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** Formats a ratio as "0.52x", or '-' when missing. */
export const fmtRatio = (r: number | null | undefined): string =>
  r == null || !Number.isFinite(r) ? '-' : `${r.toFixed(2)}x`;

/** A fraction as a percentage with one decimal, or - when missing. */
export const fmtPercent = (r: number | null | undefined): string =>
  r == null || !Number.isFinite(r) ? '-' : `${(r * 100).toFixed(1)}%`;

/** Lays out rows as an aligned plain-text table; the first row is the header. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: readonly string[]) =>
    r
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join('  ')
      .trimEnd();
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

/** The same rows as a Markdown table (for the README). */
export function markdownTable(rows: readonly (readonly string[])[]): string {
  const line = (r: readonly string[]) => `| ${r.join(' | ')} |`;
  return [
    line(rows[0]!),
    `|${rows[0]!.map((_, c) => (c === 0 ? ' --- ' : ' ---: ')).join('|')}|`,
    ...rows.slice(1).map(line),
  ].join('\n');
}

/**
 * The chat scenarios side by side: the mock as `npm start` runs it (logging to a file), the mock with
 * logging off, the stack floor, bare node:http and aimock; then the ratios the targets are about.
 */
export function floorRows(results: readonly ScenarioResult[]): string[][] | null {
  const rows = results.filter((r) => r.floor || r.silent || r.unmetered || r.aimock || r.before);
  if (!rows.length) return null;
  const cell = (f: LoadFigures | null | undefined) => (f ? `${fmt(f.reqPerSec)} (${fmt(f.cpuUsPerReq)} µs)` : '-');
  // The build before's columns only when it was measured (--before).
  const withBefore = rows.some((r) => r.before);
  return [
    [
      'scenario',
      'mock, default log',
      'mock, silent',
      'mock, --metrics off',
      'floor',
      'bare node:http',
      'aimock',
      ...(withBefore ? ['build before'] : []),
      'mock/floor',
      'mock/aimock',
      'log cost',
      'metrics cost',
      'p99 mock/floor',
      'RSS mock/floor MiB',
      'status mock/aimock',
      ...(withBefore ? ['mock/before', 'before/floor', 'before/aimock'] : []),
    ],
    ...rows.map((r) => [
      r.title,
      cell(r.mock),
      cell(r.silent),
      cell(r.unmetered),
      cell(r.floor),
      cell(r.baseline),
      cell(r.aimock),
      ...(withBefore ? [cell(r.before)] : []),
      fmtRatio(besideRatio(r, 'floor')),
      fmtRatio(besideRatio(r, 'aimock')),
      fmtPercent(logCost(r)),
      fmtPercent(metricsCost(r)),
      fmtRatio(ratio(r.mock.p99Ms, r.floor?.p99Ms)),
      `${fmt(r.mock.peakRssMiB, 1)} / ${fmt(r.floor?.peakRssMiB, 1)}`,
      `${r.mock.unexpected ? 'UNEXPECTED' : 'as expected'} / ${r.aimockStatus ?? '-'}`,
      ...(withBefore
        ? r.before
          ? [fmtRatio(besideRatio(r, 'before')), fmtRatio(beforeRatio(r, 'floor')), fmtRatio(beforeRatio(r, 'aimock'))]
          : ['-', '-', '-']
        : []),
    ]),
  ];
}

/** The main table: one row per scenario, each server's figures and the mock's ratios. */
export function scenarioRows(results: readonly ScenarioResult[]): string[][] {
  const head = [
    'scenario',
    'base req/s',
    'mock req/s',
    'ratio',
    'base p50/p99 ms',
    'mock p50/p99 ms',
    'p99 ratio',
    'base RSS MiB',
    'mock RSS MiB',
    'base/mock CPU µs/req',
    'CPU ratio',
  ];
  const pair = (f: LoadFigures | null) => (f ? `${fmt(f.p50Ms, 2)} / ${fmt(f.p99Ms, 2)}` : '-');
  return [
    head,
    ...results.map((r) => [
      r.title,
      fmt(r.baseline?.reqPerSec),
      fmt(r.mock.reqPerSec),
      fmtRatio(r.ratio.reqPerSec),
      pair(r.baseline),
      pair(r.mock),
      fmtRatio(r.ratio.p99),
      fmt(r.baseline?.peakRssMiB, 1),
      fmt(r.mock.peakRssMiB, 1),
      `${fmt(r.baseline?.cpuUsPerReq)} / ${fmt(r.mock.cpuUsPerReq)}`,
      fmtRatio(r.ratio.cpuPerReq),
    ]),
  ];
}
