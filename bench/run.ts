/**
 * `npm run bench`: the mock against a bare node:http baseline (and, in the chat scenarios, the silent
 * mock, the mock with --metrics off, the stack floor and aimock) on loopback, the servers pinned to core 0 and loaded in turns, a
 * slice at a time, by this load generator on core 1. Prints req/s, p50/p99 latency and peak
 * RSS per scenario with the mock's ratios to the baseline; asserts nothing about time.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { cpus, release, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { conformance, pair, scenario, startupPhase, streams, type Context } from './phases.js';
import { markdown, print } from './output.js';
import { pacedPhase } from './paced.js';
import { loadScenarios, pairs, streamScenario } from './scenarios.js';
import { canPin, ensureBuilt, metricsOffFlags, pinSelf, referenceScript, silentFlags, workDir } from './servers.js';
import type { BenchResults } from './results.js';
import { verdicts } from './targets.js';
import { statePhase, stateScenarios } from './state.js';
import { combine } from './report.js';

const USAGE = `Usage: npm run bench -- [options]
  --duration S      measured seconds per scenario and server   (default 10)
  --warmup S        warm-up seconds before each measurement    (default 3)
  --connections N   concurrent connections                     (default 50)
  --rounds N        measure each scenario N times; report medians            (default 1)
  --slice S         in a round, the servers compared run at once and are loaded in turns, S seconds
                    at a time, until each has had its measured seconds        (default 1)
  --only NAMES      comma-separated: chat, chat-400, chat-401, images, tts, stream, edit,
                    streams, streams-paced, linearity, startup, conformance, state (memory vs --state redis)
  --streams N       concurrent streams in the streams check and in streams-paced   (default 1000)
  --tokens N        streams-paced: tokens per stream (max_tokens)                   (default 256)
  --tps N           streams-paced: tokens per second of each stream                 (default 50)
  --ttft MS         streams-paced: time to the first token                          (default 200)
  --ramp S          streams-paced: the streams' starts are spread evenly over S seconds   (default 1)
  --json FILE       write every figure as JSON
  --markdown FILE   write the tables as Markdown
  --no-floor        skip the stack floor (minimal Koa + router + body parser + Ajv) in the chat scenarios
  --no-aimock       skip aimock (@copilotkit/aimock, on /v1/chat/completions) in the chat scenarios
  --before PATH     another build's dist/cli/main.js (the build before a change), measured as \`npm start\`
                    runs it beside the mock in the chat scenarios: both builds' targets in the same run
The mock runs as \`npm start\` does, logging every request to stdout, which goes to a file; the chat
scenarios also measure it with --log-level silent, with --metrics off (what the metrics cost; streams-paced
too), the stack floor, bare node:http and aimock.
  --quick           a short smoke run (1 s warm-up, 2 s per measurement, 3 start-ups)
Environment: UAM_BENCH_CLI=PATH measures that build's CLI (dist/cli/main.js of another checkout) instead of this one's.
`;

const { values } = parseArgs({
  options: {
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    rounds: { type: 'string' },
    slice: { type: 'string' },
    only: { type: 'string' },
    streams: { type: 'string' },
    tokens: { type: 'string' },
    tps: { type: 'string' },
    ttft: { type: 'string' },
    ramp: { type: 'string' },
    json: { type: 'string' },
    markdown: { type: 'string' },
    quick: { type: 'boolean' },
    'no-floor': { type: 'boolean' },
    'no-aimock': { type: 'boolean' },
    before: { type: 'string' },
    help: { type: 'boolean' },
  },
});
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

// The load generator runs on core 1, the servers on core 0, so neither steals the other's CPU.
pinSelf(1);
const pin = canPin();

const num = (v: string | undefined, fallback: number) => (v === undefined ? fallback : Number(v));
const quick = values.quick === true;
const slice = num(values.slice, quick ? 0.5 : 1);
if (!(slice > 0 && Number.isFinite(slice))) {
  process.stderr.write(`--slice must be a positive number of seconds, got ${values.slice}\n${USAGE}`);
  process.exit(2);
}
const before = values.before === undefined ? null : resolve(values.before);
if (before !== null && !existsSync(before)) {
  process.stderr.write(`--before: no build at ${before} (give another checkout's dist/cli/main.js)\n${USAGE}`);
  process.exit(2);
}
const only = values.only?.split(',').map((s) => s.trim());
const wanted = (name: string) => !only || only.includes(name);
const paced = {
  streams: num(values.streams, 1000),
  tokens: num(values.tokens, 256),
  tps: num(values.tps, 50),
  ttftMs: num(values.ttft, 200),
  rampS: num(values.ramp, 1),
};
// The mock takes tps from 1 and ttft from 0 (src/text/pacing.ts); a stream needs at least one token.
// Checked for the paced streams only: the streams check has always taken --streams as given.
const pacedProblem = (
  [
    [
      Number.isInteger(paced.streams) && paced.streams > 0,
      `--streams must be a positive integer, got ${values.streams}`,
    ],
    [Number.isInteger(paced.tokens) && paced.tokens > 0, `--tokens must be a positive integer, got ${values.tokens}`],
    [paced.tps >= 1 && Number.isFinite(paced.tps), `--tps must be at least 1, got ${values.tps}`],
    [paced.ttftMs >= 0 && Number.isFinite(paced.ttftMs), `--ttft must be a number of ms, got ${values.ttft}`],
    [paced.rampS >= 0 && Number.isFinite(paced.rampS), `--ramp must be a number of seconds, got ${values.ramp}`],
  ] as const
).find(([ok]) => !ok);
if (pacedProblem && wanted('streams-paced')) {
  process.stderr.write(`${pacedProblem[1]}\n${USAGE}`);
  process.exit(2);
}
const log = (line: string) => process.stderr.write(`${line}\n`);

function machine(): BenchResults['machine'] {
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    model = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    // not Linux: keep os.cpus()'s name
  }
  return {
    cpu: model,
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    os: `${process.platform} ${release()}`,
    pinned: pin ? 'server on core 0, load generator on core 1' : 'not pinned',
  };
}

async function main(): Promise<void> {
  log(ensureBuilt());
  const dir = workDir();
  const ctx: Context = {
    serverCore: pin ? 0 : null,
    connections: num(values.connections, 50),
    duration: num(values.duration, quick ? 2 : 10),
    warmup: num(values.warmup, quick ? 1 : 3),
    rounds: num(values.rounds, 1),
    slice,
    mockFlags: [],
    silentFlags: silentFlags(),
    unmeteredFlags: metricsOffFlags(),
    baselineScript: referenceScript('baseline'),
    floorScript: values['no-floor'] ? null : referenceScript('floor'),
    aimockScript: values['no-aimock'] ? null : referenceScript('aimock'),
    beforeCli: before,
    dir,
    log,
  };
  const results: BenchResults = {
    machine: machine(),
    options: {
      connections: ctx.connections,
      duration: ctx.duration,
      warmup: ctx.warmup,
      rounds: ctx.rounds,
      slice: ctx.slice,
      mockFlags: ctx.mockFlags,
      mockStdout: 'a file',
      quick,
    },
    scenarios: [],
  };
  // A phase that fails (a scenario the mock cannot serve) is reported, and the others still run.
  const phase = async (name: string, run: () => Promise<void>) => {
    try {
      await run();
    } catch (err) {
      log(`  ${name} failed: ${(err as Error).message}`);
      (results.failures ??= []).push({ phase: name, error: (err as Error).message });
    }
  };
  try {
    for (const s of loadScenarios().filter((x) => wanted(x.name))) {
      log(`${s.title} ...`);
      await phase(s.name, async () => void results.scenarios.push(await scenario(ctx, s)));
    }
    if (wanted('streams')) {
      log(`${paced.streams} concurrent streams ...`);
      await phase('streams', async () => void (results.streams = await streams(ctx, streamScenario(), paced.streams)));
    }
    if (wanted('streams-paced')) {
      log(`${paced.streams} paced streams, ${paced.tokens} tokens at ${paced.tps} tps after ${paced.ttftMs} ms ...`);
      await phase('streams-paced', async () => void (results.paced = await pacedPhase(ctx, paced)));
    }
    if (wanted('linearity')) {
      results.linearity = [];
      for (const p of pairs()) {
        log(`linearity: ${p.name} ...`);
        await phase(
          `linearity ${p.name}`,
          async () => void results.linearity!.push(await pair(ctx, p, quick ? 1 : Math.max(2, ctx.duration / 3))),
        );
      }
    }
    if (wanted('startup')) {
      log('start-up ...');
      await phase(
        'startup',
        async () => void (results.startup = await startupPhase(ctx, loadScenarios()[0]!, quick ? 3 : 7)),
      );
    }
    if (wanted('state')) {
      log('state: memory vs --state redis ...');
      await phase('state', async () => {
        results.state = await statePhase(ctx, stateScenarios(loadScenarios()[0]!), combine);
        if (!results.state.available) log(`  state: skipped, ${results.state.reason}`);
      });
    }
    if (wanted('conformance')) {
      log('conformance ...');
      await phase('conformance', async () => void (results.conformance = await conformance(ctx)));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  print(results);
  if (values.json) writeFileSync(values.json, JSON.stringify({ ...results, verdicts: verdicts(results) }, null, 2));
  if (values.markdown) writeFileSync(values.markdown, markdown(results));
}

try {
  await main();
  process.exit(0); // autocannon and agents may hold timers; the run is over
} catch (err) {
  log(`bench failed: ${(err as Error).stack ?? err}`);
  process.exit(1);
}
