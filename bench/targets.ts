import { beforeRatio, besideRatio, fmt, fmtPercent, fmtRatio, logCost, pacedRatios, ratio } from './report.js';
import type { BenchResults, PacedResult } from './results.js';

/** One target of the performance issue and whether this run met it (null: not measured). */
export interface Verdict {
  readonly target: string;
  readonly value: string;
  readonly limit: string;
  readonly met: boolean | null;
}

// The mock as `npm start` runs it (default logging), against the stack floor and aimock in the same run.
const FLOOR_RATIO: Record<string, number> = { chat: 0.9, 'chat-400': 0.9 };
const AIMOCK_RATIO: Record<string, number> = { chat: 1.5, 'chat-400': 1.5 };
// What logging every request may cost: req/s with the default log against --log-level silent.
const LOG_COST: Record<string, number> = { chat: 0.1, 'chat-401': 0.2 };
const P99_RATIO = 3;
const RSS_UNDER_LOAD = 150;
const RSS_STREAMS = 250;
/** A pair whose cost per unit of work grows more than this is reported as not linear. */
export const LINEAR_SLACK = 1.5;
const STARTUP_MS = 500;
// Paced streams: the mock against the heap floor (lateness, first token, CPU, memory over the floor's) and aimock.
const PACED_P99_RATIO = 1.25;
const PACED_FIRST_TOKEN_RATIO = 2;
const PACED_CPU_RATIO = 1.1;
const PACED_RSS_OVER_MIB = 40;
const PACED_AIMOCK_BETTER = 10;
const CONFORMANCE_S = 5;

/** Checks a run against the targets; ratios are always to the baseline measured in the same run. */
export function verdicts(r: BenchResults): Verdict[] {
  const out: Verdict[] = [];
  for (const s of r.scenarios) {
    const vsFloor = besideRatio(s, 'floor');
    const vsAimock = besideRatio(s, 'aimock');
    const cost = logCost(s);
    const min = FLOOR_RATIO[s.name];
    if (min !== undefined)
      out.push({
        target: `${s.title}: req/s, default log / stack floor`,
        value: fmtRatio(vsFloor),
        limit: `>= ${min.toFixed(2)}x`,
        met: vsFloor === null ? null : vsFloor >= min,
      });
    const minA = AIMOCK_RATIO[s.name];
    if (minA !== undefined)
      out.push({
        target: `${s.title}: req/s, default log / aimock`,
        value: fmtRatio(vsAimock),
        limit: `>= ${minA.toFixed(2)}x`,
        met: vsAimock === null ? null : vsAimock >= minA,
      });
    // The build before (`--before`), against the same floor and aimock in the same rounds: whether a target this
    // build misses was met before it on the same host, minutes apart.
    if (s.before)
      for (const [who, limits, name] of [
        ['floor', FLOOR_RATIO, 'stack floor'],
        ['aimock', AIMOCK_RATIO, 'aimock'],
      ] as const) {
        const limit = limits[s.name];
        if (limit === undefined) continue;
        const r = beforeRatio(s, who);
        out.push({
          target: `${s.title}: req/s, build before / ${name}`,
          value: fmtRatio(r),
          limit: `>= ${limit.toFixed(2)}x`,
          met: r === null ? null : r >= limit,
        });
      }
    const maxLog = LOG_COST[s.name];
    if (maxLog !== undefined)
      out.push({
        target: `${s.title}: cost of the request log (req/s, default vs silent)`,
        value: fmtPercent(cost),
        limit: `<= ${maxLog * 100}%`,
        met: cost === null ? null : cost <= maxLog,
      });
    if (s.floor) {
      const p99 = ratio(s.mock.p99Ms, s.floor.p99Ms);
      out.push({
        target: `${s.title}: p99, default log / stack floor`,
        value: fmtRatio(p99),
        limit: `<= ${P99_RATIO}x`,
        met: p99 === null ? null : p99 <= P99_RATIO,
      });
    }
    out.push({
      target: `${s.title}: every response the expected status`,
      value: `${s.mock.unexpected} unexpected of ${fmt(s.mock.responses)}`,
      limit: '0',
      met: s.mock.unexpected === 0 && (s.silent?.unexpected ?? 0) === 0,
    });
  }
  for (const s of r.scenarios) {
    out.push({
      target: `${s.title}: p99 ratio to bare node:http`,
      value: fmtRatio(s.ratio.p99),
      limit: `<= ${P99_RATIO}x`,
      met: s.ratio.p99 === null ? null : s.ratio.p99 <= P99_RATIO,
    });
  }
  for (const s of r.scenarios) {
    const rss = s.mock.peakRssMiB;
    out.push({
      target: `${s.title}: peak RSS`,
      value: `${fmt(rss, 1)} MiB (baseline ${fmt(s.baseline?.peakRssMiB, 1)})`,
      limit: `<= ${RSS_UNDER_LOAD} MiB`,
      met: rss === null ? null : rss <= RSS_UNDER_LOAD,
    });
  }
  if (r.streams) {
    const m = r.streams.mock;
    out.push({
      target: `${m.count} concurrent streams complete`,
      value: `${m.completed}/${m.count}`,
      limit: 'all',
      met: m.completed === m.count,
    });
    out.push({
      target: `${m.count} concurrent streams: peak RSS`,
      value: `${fmt(m.peakRssMiB, 1)} MiB`,
      limit: `<= ${RSS_STREAMS} MiB`,
      met: m.peakRssMiB === null ? null : m.peakRssMiB <= RSS_STREAMS,
    });
  }
  if (r.paced) out.push(...pacedVerdicts(r.paced));
  for (const l of r.linearity ?? []) {
    out.push({
      target: `linear cost: ${l.name} (${l.small.title} -> ${l.large.title})`,
      value: `${l.perUnit.toFixed(2)} per unit`,
      limit: `<= ${LINEAR_SLACK}`,
      met: l.perUnit <= LINEAR_SLACK,
    });
  }
  if (r.startup) {
    out.push({
      target: 'start-up to first answered request (GET /v1/me), median',
      value: `${fmt(r.startup.meMedianMs)} ms`,
      limit: `<= ${STARTUP_MS} ms`,
      met: r.startup.meMedianMs <= STARTUP_MS,
    });
    out.push({
      target: 'start-up to first chat completion, median',
      value: `${fmt(r.startup.chatMedianMs)} ms`,
      limit: `(<= ${STARTUP_MS} ms)`,
      met: r.startup.chatMedianMs <= STARTUP_MS,
    });
  }
  if (r.conformance) {
    const c = r.conformance;
    out.push({
      target: 'full conformance suite against the mock',
      value: c.available ? `${fmt(c.seconds, 2)} s (exit ${c.exitCode})` : 'not available',
      limit: `<= ${CONFORMANCE_S} s`,
      met: c.available && c.seconds !== undefined ? c.seconds <= CONFORMANCE_S : null,
    });
  }
  return out;
}

/**
 * The paced-streams targets: the mock's lateness, first token, CPU and memory against the heap floor's, each compared
 * round by round and then the median taken (pacedRatios); its streams, whole and without error; aimock's lateness.
 */
function pacedVerdicts(p: PacedResult): Verdict[] {
  const { mock, floor, aimock } = p;
  const name = `${p.streams} paced streams`;
  const r = pacedRatios(p);
  const better = ratio(aimock?.latenessP99Ms, mock.latenessP99Ms);
  const rounds = (p.rounds ?? 1) > 1 ? `median of ${p.rounds} rounds' ratios; ` : '';
  return [
    {
      target: `${name}: token lateness p99, mock / heap floor`,
      value: `${fmtRatio(r.lateness)} (${rounds}${fmt(mock.latenessP99Ms, 1)} / ${fmt(floor.latenessP99Ms, 1)} ms)`,
      limit: `<= ${PACED_P99_RATIO}x`,
      met: r.lateness === null ? null : r.lateness <= PACED_P99_RATIO,
    },
    {
      target: `${name}: first-token lateness p99, mock / heap floor`,
      value: `${fmtRatio(r.firstToken)} (${rounds}${fmt(mock.firstTokenP99Ms, 1)} / ${fmt(floor.firstTokenP99Ms, 1)} ms)`,
      limit: `<= ${PACED_FIRST_TOKEN_RATIO}x`,
      met: r.firstToken === null ? null : r.firstToken <= PACED_FIRST_TOKEN_RATIO,
    },
    {
      target: `${name}: CPU per token, mock / heap floor`,
      value: `${fmtRatio(r.cpu)} (${rounds}${fmt(mock.cpuUsPerToken, 1)} / ${fmt(floor.cpuUsPerToken, 1)} µs)`,
      limit: `<= ${PACED_CPU_RATIO}x`,
      met: r.cpu === null ? null : r.cpu <= PACED_CPU_RATIO,
    },
    {
      target: `${name}: peak RSS, mock - heap floor`,
      value: `${r.rssOverMiB === null ? '-' : `${r.rssOverMiB >= 0 ? '+' : ''}${fmt(r.rssOverMiB, 1)}`} MiB (${rounds.replace('ratios', 'differences')}${fmt(mock.peakRssMiB, 1)} / ${fmt(floor.peakRssMiB, 1)} MiB)`,
      limit: `<= +${PACED_RSS_OVER_MIB} MiB`,
      met: r.rssOverMiB === null ? null : r.rssOverMiB <= PACED_RSS_OVER_MIB,
    },
    {
      target: `${name}: every stream of the mock whole, none an error`,
      value: `${mock.completed}/${mock.streams}${mock.errors ? `, ${mock.errors} errors ${JSON.stringify(mock.errorCodes)}` : ''}`,
      limit: 'all',
      met: mock.completed === mock.streams && mock.errors === 0,
    },
    {
      target: `${name}: token lateness p99, aimock / mock`,
      value: fmtRatio(better),
      limit: `>= ${PACED_AIMOCK_BETTER}x`,
      met: better === null ? null : better >= PACED_AIMOCK_BETTER,
    },
  ];
}
