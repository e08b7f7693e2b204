import { spawnSync } from 'node:child_process';
import type { Answer } from './baseline.js';
import { capture, concurrentStreams, load, send, sequentialCost, Tally, type Load } from './load.js';
import { combine, compare, linearity, median, type Beside, type LoadFigures, type ScenarioResult } from './report.js';
import { API_KEY, meScenario, type Pair, type Scenario } from './scenarios.js';
import { join } from 'node:path';
import { cliPath, startAimock, startMock, startReference, startServe, type Server } from './servers.js';
import type { BenchResults, LinearityResult, StreamsFigures } from './results.js';

/** What every phase needs: where to pin, how long to load, and how to start each server. */
export interface Context {
  readonly serverCore: number | null;
  readonly connections: number;
  readonly duration: number;
  readonly warmup: number;
  /** Measurements of each server per scenario, each with fresh servers; figures are their medians. */
  readonly rounds: number;
  /**
   * Seconds of one slice: in a round, the servers compared are loaded in turns, a slice each, until each
   * has had `duration` seconds, so that all of them see the same minutes of a shared host.
   */
  readonly slice: number;
  /** The mock's flags: none, so it runs as `npm start` does, logging every request to stdout. */
  readonly mockFlags: string[];
  /** The flags of the mock with its logging off (`--log-level silent`), measured beside it in the chat scenarios. */
  readonly silentFlags: string[];
  /** The flags that turn the mock's metrics off (`--metrics off`), measured beside it in the chat scenarios; null when
   * the CLI has no such flag. */
  readonly unmeteredFlags: string[] | null;
  readonly baselineScript: string;
  /** aimock (bench/aimock.ts), measured in the chat scenarios on its own path; null to skip. */
  readonly aimockScript: string | null;
  /** The stack-floor server, measured where the issue names a floor (the chat scenarios); null to skip. */
  readonly floorScript: string | null;
  /** Another build's dist/cli/main.js (`--before`), measured as `npm start` runs it in the chat scenarios; null to skip. */
  readonly beforeCli?: string | null;
  readonly dir: string;
  readonly log: (line: string) => void;
}

/** A load's figures, with the server's CPU seconds spent on it (null where they cannot be read). */
const figures = (l: Load, server: Server, cpuSeconds: number | null): LoadFigures => ({
  reqPerSec: l.reqPerSec,
  p50Ms: l.p50Ms,
  p99Ms: l.p99Ms,
  meanMs: l.meanMs,
  peakRssMiB: server.peakRssMiB(),
  cpuUsPerReq: cpuSeconds === null || !l.responses ? null : (cpuSeconds * 1e6) / l.responses,
  responses: l.responses,
  unexpected: l.unexpected,
});

/**
 * Waits until the server has used no CPU for 300 ms (at most `maxMs`): the mock loads its tokenizer
 * tables in the background while idle, and that work belongs to start-up, not to any scenario.
 */
export async function settle(server: Server, maxMs = 5000): Promise<void> {
  const until = performance.now() + maxMs;
  let last = server.cpuSeconds();
  let still = 0;
  while (last !== null && still < 3 && performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = server.cpuSeconds();
    still = now === last ? still + 1 : 0;
    last = now;
  }
}

/**
 * The mock as `npm start` runs it, its stdout (the request log, one line per request) redirected to a
 * file as a process manager writing a log file would: the lines are really written, to the page cache,
 * and the file is removed when the server stops. A pipe the bench read would put the bench's own reading
 * on the load generator's core; /dev/null would skip the copy of the bytes.
 */
export const startDefaultMock = (ctx: Context, flags: string[] = [], nodeArgs: string[] = []): Promise<Server> =>
  startMock(ctx.serverCore, [...ctx.mockFlags, ...flags], nodeArgs, join(ctx.dir, 'mock.stdout.log'));

/**
 * The mock as startDefaultMock starts it (logging to a file of its own) but with `--metrics off`: the one
 * difference, so that what keeping the metrics costs is a ratio of two servers of the same run.
 */
export const startUnmetered = (ctx: Context): Promise<Server> =>
  startMock(ctx.serverCore, [...ctx.mockFlags, ...ctx.unmeteredFlags!], [], join(ctx.dir, 'unmetered.stdout.log'));

/** aimock's path for the chat scenarios: the same request, sent where aimock serves it. */
export const AIMOCK_CHAT_PATH = '/v1/chat/completions';

/** Settles a started server, then loads it for the warm-up. */
async function warmUp(ctx: Context, server: Server, s: Scenario): Promise<void> {
  await settle(server);
  if (ctx.warmup > 0) await load(server.url, s, ctx.connections, ctx.warmup);
}

/** Says so when a server answered anything but the scenario's expected status. */
function warnUnexpected(ctx: Context, who: string, s: Scenario, l: Load): void {
  if (l.unexpected)
    ctx.log(`  warning: ${who} ${s.name}: ${l.unexpected} unexpected answers ${JSON.stringify(l.statuses)}`);
}

/** Loads one started server with a scenario (warm-up, then the measurement) and stops it. */
export async function measure(ctx: Context, server: Server, s: Scenario, who: string): Promise<LoadFigures> {
  try {
    await warmUp(ctx, server, s);
    const cpuBefore = server.cpuSeconds();
    const l = await load(server.url, s, ctx.connections, ctx.duration);
    const cpuAfter = server.cpuSeconds();
    warnUnexpected(ctx, who, s, l);
    return figures(l, server, cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore);
  } finally {
    await server.stop();
  }
}

/** The scenarios for which the stack floor (Koa + router + body parser + Ajv) is measured too. */
export const FLOOR_SCENARIOS = new Set(['chat', 'chat-400', 'chat-401']);

/** A server of a round, and the request it is sent (aimock has its own path and status). */
interface Contender {
  readonly who: Beside | 'mock' | 'baseline';
  readonly server: Server;
  readonly scenario: Scenario;
}

/**
 * Measures servers that run at the same time, each loaded alone in its turn: each is settled and warmed
 * up, then they take turns a slice at a time until each has had `ctx.duration` seconds. On a shared host
 * the speed of the machine changes from one second to the next, by 10-30% on the host these figures come
 * from: runs of ten seconds one after the other each see a different machine, where slices of a second in
 * turns see the same one.
 *
 * The turns rotate (slice i starts with server i + round): every server has the others' turns between two
 * of its own. Turns reversed from slice to slice gave the first and the last server two slices in a row
 * every other time, and the first one measured 10-20 % more CPU a request than the same build in the middle
 * (what a server defers, a collection or a sweep, lands inside its measured time when no idle gap follows
 * a slice); that gap was read as the cost of the first server's settings.
 */
export async function interleaved(
  ctx: Context,
  contenders: readonly Contender[],
  round: number,
): Promise<Map<Contender['who'], LoadFigures>> {
  const order = (i: number) => contenders.map((_, k) => (k + i + round) % contenders.length);
  for (const c of contenders) await settle(c.server);
  // The warm-up in turns too: each server then comes to its first measured slice after the same idle time (warmed
  // up one after the other, the first waited for all the others' warm-ups, and measured slower).
  const warmSlices = Math.max(1, Math.round(ctx.warmup / ctx.slice));
  if (ctx.warmup > 0)
    for (let i = 0; i < warmSlices; i++)
      for (const k of order(i)) {
        const { server, scenario: s } = contenders[k]!;
        await load(server.url, s, ctx.connections, ctx.warmup / warmSlices);
      }
  const slices = Math.max(1, Math.round(ctx.duration / ctx.slice));
  const tallies = contenders.map(() => new Tally());
  const cpu = contenders.map((c): number | null => (c.server.cpuSeconds() === null ? null : 0));
  for (let i = 0; i < slices; i++) {
    for (const k of order(warmSlices + i)) {
      const { server, scenario: s } = contenders[k]!;
      const before = server.cpuSeconds();
      await tallies[k]!.load(server.url, s, ctx.connections, ctx.duration / slices);
      const after = server.cpuSeconds();
      cpu[k] = cpu[k] === null || before === null || after === null ? null : cpu[k]! + after - before;
    }
  }
  const result = new Map<Contender['who'], LoadFigures>();
  contenders.forEach((c, k) => {
    const l = tallies[k]!.figures();
    warnUnexpected(ctx, c.who, c.scenario, l);
    result.set(c.who, figures(l, c.server, cpu[k] ?? null));
  });
  return result;
}

/**
 * One load scenario, `rounds` times: the mock (default logging) and a baseline that sends the answer the
 * mock gave, and for the chat scenarios also the mock with logging off, the stack floor and aimock. In a
 * round they all run at once and are loaded in turns, a slice at a time (see `interleaved`), and each
 * comparison the targets make (mock/floor, mock/aimock, the log's cost) is the median of the rounds'
 * own ratios.
 */
export async function scenario(ctx: Context, s: Scenario): Promise<ScenarioResult> {
  const chat = FLOOR_SCENARIOS.has(s.name);
  const beside: Beside[] = chat ? ['silent'] : [];
  if (chat && ctx.unmeteredFlags !== null) beside.push('unmetered');
  if (chat && ctx.floorScript !== null) beside.push('floor');
  if (chat && ctx.aimockScript !== null) beside.push('aimock');
  if (chat && ctx.beforeCli) beside.push('before');
  const mock: LoadFigures[] = [];
  const baseline: LoadFigures[] = [];
  const others: Record<Beside, LoadFigures[]> = { silent: [], unmetered: [], floor: [], aimock: [], before: [] };
  const paired: Record<Beside, number[]> = { silent: [], unmetered: [], floor: [], aimock: [], before: [] };
  // The build before against the floor and aimock, round by round: its own targets, in the same run.
  const beforePaired: Record<'floor' | 'aimock', number[]> = { floor: [], aimock: [] };
  let answer: Answer | undefined;
  let aimockStatus: number | undefined;
  for (let round = 0; round < Math.max(1, ctx.rounds); round++) {
    const contenders: Contender[] = [];
    try {
      const mockServer = await startDefaultMock(ctx);
      contenders.push({ who: 'mock', server: mockServer, scenario: s });
      answer ??= await capture(mockServer.url, s);
      for (const who of beside) {
        if (who === 'silent')
          contenders.push({ who, server: await startMock(ctx.serverCore, ctx.silentFlags), scenario: s });
        else if (who === 'unmetered') contenders.push({ who, server: await startUnmetered(ctx), scenario: s });
        else if (who === 'before')
          contenders.push({
            who,
            server: await startServe(ctx.beforeCli!, ctx.serverCore, [], [], join(ctx.dir, 'before.stdout.log')),
            scenario: s,
          });
        else if (who === 'floor')
          contenders.push({
            who,
            server: await startReference(ctx.serverCore, ctx.floorScript!, ctx.dir, s.name, answer),
            scenario: s,
          });
        else {
          const server = await startAimock(ctx.serverCore, ctx.aimockScript!, join(ctx.dir, 'aimock.stdout.log'));
          const own: Scenario = { ...s, path: AIMOCK_CHAT_PATH };
          const at = contenders.push({ who, server, scenario: own }) - 1;
          // aimock answers what it answers (it checks no key, validates nothing): its own status is expected.
          aimockStatus ??= (await send(server.url, own)).status;
          contenders[at] = { who, server, scenario: { ...own, expect: aimockStatus } };
        }
      }
      contenders.push({
        who: 'baseline',
        server: await startReference(ctx.serverCore, ctx.baselineScript, ctx.dir, s.name, answer),
        scenario: s,
      });
      const measured = await interleaved(ctx, contenders, round);
      mock.push(measured.get('mock')!);
      baseline.push(measured.get('baseline')!);
      for (const who of beside) {
        others[who].push(measured.get(who)!);
        paired[who].push(measured.get('mock')!.reqPerSec / measured.get(who)!.reqPerSec);
      }
      const before = measured.get('before');
      if (before)
        for (const who of ['floor', 'aimock'] as const) {
          const other = measured.get(who);
          if (other) beforePaired[who].push(before.reqPerSec / other.reqPerSec);
        }
    } finally {
      await Promise.all(contenders.map((c) => c.server.stop()));
    }
  }
  const m = combine(mock);
  const b = combine(baseline);
  const f = beside.includes('floor') ? combine(others.floor) : null;
  return {
    name: s.name,
    title: s.title,
    baseline: b,
    floor: f,
    mock: m,
    ratio: compare(m, b),
    floorRatio: f ? compare(f, b) : null,
    ...(chat ? { silent: combine(others.silent) } : {}),
    ...(beside.includes('unmetered') ? { unmetered: combine(others.unmetered) } : {}),
    ...(beside.includes('aimock') ? { aimock: combine(others.aimock), aimockStatus } : {}),
    ...(beside.includes('before') ? { before: combine(others.before), beforePaired } : {}),
    ...(beside.length ? { paired: Object.fromEntries(beside.map((who) => [who, paired[who]])) } : {}),
  };
}

async function streamsOn(server: Server, s: Scenario, count: number): Promise<StreamsFigures> {
  try {
    await send(server.url, s); // first use loads the tokenizer; not part of the burst
    const r = await concurrentStreams(server.url, s, count);
    return { count, completed: r.completed, seconds: r.seconds, peakRssMiB: server.peakRssMiB() };
  } finally {
    await server.stop();
  }
}

/** `count` streamed completions at once (pacing off) on the mock and on the baseline. */
export async function streams(ctx: Context, s: Scenario, count: number): Promise<NonNullable<BenchResults['streams']>> {
  const mockServer = await startDefaultMock(ctx);
  const answer = await capture(mockServer.url, s);
  const mock = await streamsOn(mockServer, s, count);
  const baseline = await streamsOn(
    await startReference(ctx.serverCore, ctx.baselineScript, ctx.dir, 'streams', answer),
    s,
    count,
  );
  return { mock, baseline };
}

/** Per-request cost of each request of a pair, sequentially on one connection of one mock. */
export async function pair(ctx: Context, p: Pair, seconds: number): Promise<LinearityResult> {
  const server = await startDefaultMock(ctx);
  try {
    // Warm both first so neither pays for first-use work (tokenizer tables, media cache, JIT).
    await sequentialCost(server.url, p.small, Math.min(1, seconds), 10);
    await sequentialCost(server.url, p.large, Math.min(1, seconds), 10);
    const small = await sequentialCost(server.url, p.small, seconds);
    const large = await sequentialCost(server.url, p.large, seconds);
    const { costRatio, perUnit } = linearity(small.meanMs, large.meanMs, p.workRatio);
    return {
      name: p.name,
      unit: p.unit,
      small: { title: p.small.title, meanMs: small.meanMs, requests: small.requests },
      large: { title: p.large.title, meanMs: large.meanMs, requests: large.requests },
      workRatio: p.workRatio,
      costRatio,
      perUnit,
    };
  } finally {
    await server.stop();
  }
}

/** Milliseconds from spawning the mock to the end of the first answer to `s`, over `runs` fresh starts. */
export async function startup(ctx: Context, s: Scenario, runs: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const server = await startDefaultMock(ctx);
    try {
      const got = await send(server.url, s);
      if (got.status !== 200) throw new Error(`start-up: ${s.path} answered ${got.status}`);
      times.push(performance.now() - started);
    } finally {
      await server.stop();
    }
  }
  return times;
}

/** The start-up phase: to the first GET /v1/me, and separately to the first chat completion. */
export async function startupPhase(
  ctx: Context,
  chat: Scenario,
  runs: number,
): Promise<NonNullable<BenchResults['startup']>> {
  const meMs = await startup(ctx, meScenario(), runs);
  const chatMs = await startup(ctx, chat, runs);
  return { meMs, chatMs, meMedianMs: median(meMs), chatMedianMs: median(chatMs) };
}

/** Times the full conformance suite against a fresh mock, when the CLI has the command. */
export async function conformance(ctx: Context): Promise<NonNullable<BenchResults['conformance']>> {
  const help = spawnSync(process.execPath, [cliPath(), 'conformance', '--help'], { encoding: 'utf8' });
  if (help.status !== 0 || !`${help.stdout}`.includes('--base-url')) return { available: false };
  const server = await startDefaultMock(ctx);
  try {
    const started = performance.now();
    const run = spawnSync(
      process.execPath,
      [cliPath(), 'conformance', '--base-url', server.url, '--api-key', API_KEY, '--profile', 'full'],
      {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    const seconds = (performance.now() - started) / 1000;
    const lines = `${run.stdout}${run.stderr}`.trim().split('\n');
    return { available: true, seconds, exitCode: run.status, summary: lines.slice(-3).join('\n') };
  } finally {
    await server.stop();
  }
}
