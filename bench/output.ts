import { floorRows, fmt, fmtPercent, fmtRatio, markdownTable, ratio, scenarioRows, table } from './report.js';
import type { BenchResults, PacedFigures, PacedResult } from './results.js';
import { verdicts } from './targets.js';

/** The report's tables, each with its title. */
function sections(r: BenchResults): { title: string; rows: string[][] }[] {
  const out: { title: string; rows: string[][] }[] = [];
  if (r.scenarios.length)
    out.push({
      title: `Load: -c ${r.options.connections}, ${r.options.warmup} s warm-up, ${r.options.duration} s measured${r.options.slice ? `, in turns of ${r.options.slice} s` : ''}${Number(r.options.rounds) > 1 ? `, median of ${r.options.rounds} rounds` : ''}; ratio = mock / baseline`,
      rows: scenarioRows(r.scenarios),
    });
  const floor = floorRows(r.scenarios);
  if (floor)
    out.push({
      title:
        "Stack floor: minimal Koa + @koa/router + koa-bodyparser + compiled Ajv doing the same; mock/floor, mock/aimock and the log's cost are medians of the rounds' ratios",
      rows: floor,
    });
  if (r.streams) {
    const row = (who: string, f: NonNullable<BenchResults['streams']>['mock'] | null) =>
      f ? [who, `${f.completed}/${f.count}`, fmt(f.seconds, 2), fmt(f.peakRssMiB, 1)] : [who, '-', '-', '-'];
    out.push({
      title: 'Concurrent streamed completions (200 tokens, pacing off)',
      rows: [
        ['server', 'completed', 'seconds', 'peak RSS MiB'],
        row('baseline', r.streams.baseline),
        row('mock', r.streams.mock),
      ],
    });
  }
  if (r.paced) {
    const p = r.paced;
    out.push({
      title: `Paced streams: ${fmt(p.streams)} streams of ${p.tokens} tokens at ${p.tps} tps after ${p.ttftMs} ms, started over ${p.rampS} s, each server in turn${(p.rounds ?? 1) > 1 ? `, medians of ${p.rounds} rounds (aimock: one)` : ''}; lateness of token k = its arrival - (the stream's first token's + k/tps), of the first token = its arrival - (request sent + ttft)`,
      rows: pacedRows(p),
    });
    if (p.perRound && p.perRound.mock.length > 1)
      out.push({
        title:
          'Paced streams round by round: the mock against the heap floor measured beside it (targets: the medians)',
        rows: pacedRoundRows(p.perRound),
      });
  }
  if (r.linearity) {
    out.push({
      title: 'Linearity: mean ms per request, sequential on one connection',
      rows: [
        ['pair', 'small', 'ms', 'large', 'ms', 'work x', 'cost x', 'cost per unit'],
        ...r.linearity.map((l) => [
          l.name,
          l.small.title,
          fmt(l.small.meanMs, 2),
          l.large.title,
          fmt(l.large.meanMs, 2),
          fmt(l.workRatio),
          fmt(l.costRatio, 2),
          fmt(l.perUnit, 2),
        ]),
      ],
    });
  }
  if (r.startup) {
    const s = r.startup;
    out.push({
      title: 'Start-up: spawn to first answer, ms',
      rows: [
        ['first request', 'median', 'runs'],
        ['GET /v1/me', fmt(s.meMedianMs), s.meMs.map((t) => fmt(t)).join(' ')],
        ['chat completion', fmt(s.chatMedianMs), s.chatMs.map((t) => fmt(t)).join(' ')],
      ],
    });
  }
  if (r.state?.rows) {
    out.push({
      title: `Shared state: a rate-limited key, state in memory vs in Redis ${r.state.redisVersion} on loopback (--state redis://); ratio = redis / memory`,
      rows: [
        ['scenario', 'memory req/s', 'redis req/s', 'ratio', 'memory p99 ms', 'redis p99 ms'],
        ...r.state.rows.map((row) => [
          row.title,
          fmt(row.memory.reqPerSec),
          fmt(row.redis.reqPerSec),
          fmtRatio(row.redis.reqPerSec / row.memory.reqPerSec),
          fmt(row.memory.p99Ms, 2),
          fmt(row.redis.p99Ms, 2),
        ]),
      ],
    });
  } else if (r.state) out.push({ title: 'Shared state', rows: [['skipped'], [r.state.reason ?? '']] });
  out.push({
    title: 'Targets',
    rows: [
      ['target', 'value', 'limit', 'met'],
      ...verdicts(r).map((v) => [v.target, v.value, v.limit, v.met === null ? '-' : v.met ? 'yes' : 'NO']),
    ],
  });
  return out;
}

/** One row per round of the paced-streams scenario: the floor's and the mock's figures and the mock's ratios. */
function pacedRoundRows(rounds: NonNullable<PacedResult['perRound']>): string[][] {
  const pair = (f: PacedFigures | undefined, m: PacedFigures, key: keyof PacedFigures, digits: number) =>
    `${fmt(f?.[key] as number | null | undefined, digits)} / ${fmt(m[key] as number | null, digits)}`;
  return [
    [
      'round',
      'lateness p99 ms, floor / mock',
      'mock / floor',
      'first token p99 ms, floor / mock',
      'CPU µs/token, floor / mock',
      'mock / floor',
      'peak RSS MiB, floor / mock',
    ],
    ...rounds.mock.map((m, i) => {
      const f = rounds.floor[i];
      return [
        String(i + 1),
        pair(f, m, 'latenessP99Ms', 1),
        fmtRatio(ratio(m.latenessP99Ms, f?.latenessP99Ms)),
        pair(f, m, 'firstTokenP99Ms', 1),
        pair(f, m, 'cpuUsPerToken', 1),
        fmtRatio(ratio(m.cpuUsPerToken, f?.cpuUsPerToken)),
        pair(f, m, 'peakRssMiB', 1),
      ];
    }),
  ];
}

/** One row per server of the paced-streams scenario. */
function pacedRows(p: NonNullable<BenchResults['paced']>): string[][] {
  const row = (who: string, f: PacedFigures | null) =>
    f
      ? [
          who,
          `${f.completed} / ${f.failed} / ${f.errors}`,
          `${fmt(f.latenessP50Ms, 1)} / ${fmt(f.latenessP99Ms, 1)} / ${fmt(f.latenessMaxMs, 1)}`,
          fmt(f.firstTokenP99Ms, 1),
          fmt(f.gaps),
          fmt(f.cpuSeconds, 2),
          fmt(f.cpuUsPerToken, 1),
          fmt(f.peakRssMiB, 1),
          fmt(f.seconds, 1),
          fmt(f.coreOtherSeconds, 2),
          `${fmtPercent(f.client.cpuShare)} / ${fmt(f.client.loopDelayP99Ms, 1)}`,
        ]
      : [who, 'not measured', '', '', '', '', '', '', '', '', ''];
  return [
    [
      'server',
      'complete / failed / errors',
      'lateness p50 / p99 / max ms',
      'first token p99 ms',
      'gaps > 2x',
      'CPU s',
      'CPU µs/token',
      'peak RSS MiB',
      'seconds',
      'others on core s',
      'client CPU / loop p99 ms',
    ],
    row('heap floor (node:http)', p.floor),
    row('mock', p.mock),
    ...(p.unmetered === undefined ? [] : [row('mock, --metrics off', p.unmetered)]),
    row('aimock', p.aimock),
  ];
}

/** Prints the report as plain-text tables. */
export function print(r: BenchResults): void {
  const m = r.machine;
  process.stdout.write(
    `\nMachine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Node ${m.node}, ${m.os}; ${m.pinned}\n`,
  );
  for (const s of sections(r)) process.stdout.write(`\n${s.title}\n${table(s.rows)}\n`);
  for (const f of r.failures ?? []) process.stdout.write(`\nFAILED ${f.phase}: ${f.error}\n`);
  if (r.conformance?.summary) process.stdout.write(`\nConformance output (last lines):\n${r.conformance.summary}\n`);
}

/** The report as Markdown (for the README). */
export function markdown(r: BenchResults): string {
  const m = r.machine;
  return (
    [
      `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Node ${m.node}, ${m.os}; ${m.pinned}.`,
      ...sections(r).map((s) => `**${s.title}**\n\n${markdownTable(s.rows)}`),
    ].join('\n\n') + '\n'
  );
}
