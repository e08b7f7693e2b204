/**
 * The paced-streams scenario (`--only streams-paced`): many concurrent streamed chat completions paced at
 * `tps` tokens a second after `ttft` ms, their starts spread over a ramp, on three servers measured in
 * turn: the heap floor (bare node:http sending the mock's stream paced by one timer over a heap, bench/pacedFloor.ts),
 * the mock as `npm start` runs it, and aimock with the same pacing. It reports how late the tokens arrive and what
 * the server's CPU paid for them.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Answer } from './baseline.js';
import { capture } from './load.js';
import { pacedLoad } from './pacedClient.js';
import { lateness, rawRequest, tokenLayout, tokensBefore, type PacedPlan } from './pacing.js';
import { AIMOCK_CHAT_PATH, settle, startDefaultMock, startUnmetered, type Context } from './phases.js';
import { combinePaced } from './report.js';
import type { PacedFigures, PacedResult } from './results.js';
import { pacedScenario, type Scenario } from './scenarios.js';
import { coreBusySeconds, referenceScript, startAimock, startProcess, treeCpuSeconds, type Server } from './servers.js';

/** What the scenario asks for: the plan of each stream, how many at once, and the ramp of their starts. */
export interface PacedOptions extends PacedPlan {
  readonly streams: number;
  readonly rampS: number;
}

/**
 * Loads one started server with the paced streams and stops it. A first stream, alone, warms it up and
 * gives the layout of its answer (which event carries which token); its answer is returned too.
 */
async function measurePaced(
  ctx: Context,
  server: Server,
  s: Scenario,
  o: PacedOptions,
  who: string,
): Promise<{ figures: PacedFigures; answer: Answer }> {
  try {
    await settle(server);
    const answer = await capture(server.url, s);
    const layout = tokenLayout(answer.body.toString('utf8'), o.tokens);
    const planned = o.rampS * 1000 + o.ttftMs + (o.tokens * 1000) / o.tps;
    const loop = monitorEventLoopDelay({ resolution: 1 });
    const core = ctx.serverCore === null ? () => null : () => coreBusySeconds(ctx.serverCore!);
    const coreBefore = core();
    const cpuBefore = treeCpuSeconds(server.pid);
    const clientBefore = process.cpuUsage();
    loop.enable();
    const { records, seconds } = await pacedLoad({
      url: server.url,
      request: rawRequest(server.url, s.path, s.headers, s.body!),
      count: o.streams,
      rampMs: o.rampS * 1000,
      events: layout.length,
      timeoutMs: 3 * planned + 10_000,
    });
    loop.disable();
    const client = process.cpuUsage(clientBefore);
    const cpuAfter = treeCpuSeconds(server.pid);
    const coreAfter = core();
    const late = lateness(records, layout, o);
    const cpuSeconds = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
    const figures: PacedFigures = {
      ...late,
      cpuSeconds,
      cpuUsPerToken: cpuSeconds === null || !late.tokens ? null : (cpuSeconds * 1e6) / late.tokens,
      peakRssMiB: server.peakRssMiB(),
      seconds,
      coreOtherSeconds:
        cpuSeconds === null || coreBefore === null || coreAfter === null
          ? null
          : Math.max(0, coreAfter - coreBefore - cpuSeconds),
      client: { cpuShare: (client.user + client.system) / 1e6 / seconds, loopDelayP99Ms: loop.percentile(99) / 1e6 },
    };
    ctx.log(
      `  ${who}: ${figures.completed}/${figures.streams} complete${figures.errors ? ` (errors: ${JSON.stringify(figures.errorCodes)})` : ''}, token lateness p99 ${figures.latenessP99Ms.toFixed(1)} ms, ${seconds.toFixed(1)} s`,
    );
    return { figures, answer };
  } finally {
    await server.stop();
  }
}

/**
 * Starts the heap floor (bench/pacedFloor.ts) with the mock's captured stream, written to `dir`, each event due after
 * the tokens before it; `args` are the floor's own flags (`--head`).
 */
export function startPacedFloor(
  dir: string,
  core: number | null,
  answer: Answer,
  plan: PacedPlan,
  nodeArgs: string[] = [],
  args: string[] = [],
): Promise<Server> {
  const file = join(dir, 'streams-paced.answer.json');
  const layout = tokenLayout(answer.body.toString('utf8'), plan.tokens);
  writeFileSync(
    file,
    JSON.stringify({
      contentType: answer.contentType,
      body: answer.body.toString('base64'),
      tokensBefore: tokensBefore(layout),
    }),
  );
  return startProcess(
    [
      referenceScript('pacedFloor'),
      '--answer',
      file,
      '--ttft',
      String(plan.ttftMs),
      '--tps',
      String(plan.tps),
      ...args,
    ],
    core,
    nodeArgs,
  );
}

/**
 * The scenario, in `ctx.rounds` rounds: in each, the mock (its answer of the first round is the floor's), the mock with
 * `--metrics off` and the floor, the order turned by one each round, so that no server always meets the host at the
 * same moment; then aimock once. Sequential runs on a shared host vary several times over, so with more than one
 * round each figure is the median of the rounds (combinePaced).
 */
export async function pacedPhase(ctx: Context, o: PacedOptions): Promise<PacedResult> {
  const s = pacedScenario(o);
  const rounds = Math.max(1, ctx.rounds);
  const runs = { mock: [] as PacedFigures[], unmetered: [] as PacedFigures[], floor: [] as PacedFigures[] };
  let answer: Answer | undefined;
  const who = (name: string, round: number) => (rounds > 1 ? `${name}, round ${round + 1}` : name);
  const turns: Array<{ key: keyof typeof runs; measure: (round: number) => Promise<PacedFigures> }> = [
    {
      key: 'mock',
      measure: async (round) => {
        const got = await measurePaced(ctx, await startDefaultMock(ctx), s, o, who('mock', round));
        answer ??= got.answer;
        return got.figures;
      },
    },
    ...(ctx.unmeteredFlags === null
      ? []
      : [
          {
            key: 'unmetered' as const,
            measure: async (round: number) =>
              (await measurePaced(ctx, await startUnmetered(ctx), s, o, who('mock, --metrics off', round))).figures,
          },
        ]),
    {
      key: 'floor',
      measure: async (round) =>
        (await measurePaced(ctx, await startPacedFloor(ctx.dir, ctx.serverCore, answer!, o), s, o, who('floor', round)))
          .figures,
    },
  ];
  for (let round = 0; round < rounds; round++)
    for (let i = 0; i < turns.length; i++) {
      const turn = turns[(i + round) % turns.length]!;
      runs[turn.key].push(await turn.measure(round));
    }
  let aimock: PacedFigures | null = null;
  if (ctx.aimockScript !== null) {
    const args = ['--ttft', String(o.ttftMs), '--tps', String(o.tps), '--tokens', String(o.tokens)];
    try {
      const server = await startAimock(ctx.serverCore, ctx.aimockScript, join(ctx.dir, 'aimock.stdout.log'), args);
      aimock = (await measurePaced(ctx, server, { ...s, path: AIMOCK_CHAT_PATH }, o, 'aimock')).figures;
    } catch (err) {
      ctx.log(`  aimock: not measured, ${(err as Error).message}`);
    }
  }
  return {
    ...o,
    rounds,
    floor: combinePaced(runs.floor),
    mock: combinePaced(runs.mock),
    aimock,
    unmetered: runs.unmetered.length ? combinePaced(runs.unmetered) : null,
    perRound: { floor: runs.floor, mock: runs.mock },
  };
}
