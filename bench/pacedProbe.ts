/**
 * One paced-streams run against one server, with the tools that say where its time goes: `node --import tsx
 * bench/pacedProbe.ts [mock|floor] [--flags 'serve flags'] [--node 'node flags'] [--perf EVENTS | --record FILE] [--prof]
 * [--gc] [--twice] [--streams N --tokens N --tps N --ttft MS --ramp S] [--head at-once|first-event]`.
 * The server runs pinned to core 0 as in the bench (the mock as `npm start` runs it, its log to a file); the load
 * is the bench's (1,000 streams of 256 tokens at 50 tps after 200 ms, over 1 s). The server's CPU is reported as user
 * and system time (the system time is the sockets' writes, the same for every server), and, for the mock, its own
 * figures from `GET /__admin/streams`: how late it wrote the first events against each request's arrival, which,
 * beside the first token the client measured, says how long requests waited to be accepted and read.
 * `--perf` runs `perf stat -e EVENTS` on the server for the load (`--record`: `perf record -g` into FILE, with the
 * clock `perf inject --jit` needs when the server runs with `--node=--perf-prof`); `--prof` its `--cpu-prof`,
 * summarised; `--gc` counts the mock's collections (`--trace-gc`); `--phases` gives the token lateness by when the
 * tokens were due, in half seconds from the first request (the ramp's streams arriving, then the streams running
 * alone); `--twice` runs the load once unmeasured first, so that what is measured is the steady state, with V8's
 * compiler done with the path. UAM_BENCH_CLI measures another build, as in the bench.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { profileReport } from './cpuprofile.js';
import { capture } from './load.js';
import { pacedLoad } from './pacedClient.js';
import { startPacedFloor } from './paced.js';
import { lateness, rawRequest, tokenLayout } from './pacing.js';
import { settle } from './phases.js';
import { pacedScenario } from './scenarios.js';
import {
  ROOT,
  canPin,
  ensureBuilt,
  pinSelf,
  startMock,
  statUserSystemSeconds,
  treeCpuSeconds,
  type Server,
} from './servers.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    flags: { type: 'string', default: '' },
    node: { type: 'string', default: '' },
    perf: { type: 'string' },
    record: { type: 'string' },
    prof: { type: 'boolean' },
    gc: { type: 'boolean' },
    streams: { type: 'string', default: '1000' },
    tokens: { type: 'string', default: '256' },
    tps: { type: 'string', default: '50' },
    ttft: { type: 'string', default: '200' },
    ramp: { type: 'string', default: '1' },
    head: { type: 'string' },
    top: { type: 'string', default: '30' },
    phases: { type: 'boolean' },
    twice: { type: 'boolean' },
  },
});
const who = positionals[0] ?? 'mock';

/** Token lateness (p50, p99, max) by when the token was due, in half seconds from the first request sent. */
function byPhase(records: Awaited<ReturnType<typeof pacedLoad>>['records'], layout: readonly number[]): string {
  const interval = 1000 / plan.tps;
  const tokenEvents = layout.flatMap((k, e) => (k >= 0 ? [e] : []));
  const start = Math.min(...records.map((r) => r.sentAt));
  const bins: number[][] = [];
  for (const r of records) {
    const t0 = r.arrivals[tokenEvents[0]!]!;
    for (let k = 1; k < tokenEvents.length && tokenEvents[k]! < r.events; k++) {
      const due = t0 + k * interval;
      (bins[Math.floor((due - start) / 500)] ??= []).push(r.arrivals[tokenEvents[k]!]! - due);
    }
  }
  const q = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!.toFixed(1);
  return `${bins
    .map((xs, i) => {
      xs.sort((a, b) => a - b);
      return `  due ${(i / 2).toFixed(1)}-${((i + 1) / 2).toFixed(1)} s: ${xs.length} tokens, lateness p50 ${q(xs, 0.5)} p99 ${q(xs, 0.99)} max ${q(xs, 1)} ms`;
    })
    .join('\n')}\n`;
}
pinSelf(1);
ensureBuilt();
const core = canPin() ? 0 : null;
const dir = mkdtempSync(join(tmpdir(), 'uam-probe-'));
const plan = { tokens: Number(values.tokens), tps: Number(values.tps), ttftMs: Number(values.ttft) };
const s = pacedScenario(plan);
const split = (v: string) => v.split(' ').filter(Boolean);
const nodeArgs = [
  ...split(values.node),
  ...(values.prof ? ['--cpu-prof', '--cpu-prof-dir', dir] : []),
  ...(values.gc ? ['--trace-gc'] : []),
];
const stdout = join(dir, 'stdout.log');

async function start(): Promise<Server> {
  const mock = await startMock(core, split(values.flags), who === 'mock' ? nodeArgs : [], stdout);
  if (who === 'mock') return mock;
  const answer = await capture(mock.url, s);
  await mock.stop();
  return startPacedFloor(dir, core, answer, plan, nodeArgs, values.head ? ['--head', values.head] : []);
}

const server = await start();
await settle(server);
const answer = await capture(server.url, s);
const layout = tokenLayout(answer.body.toString('utf8'), plan.tokens);
const load = {
  url: server.url,
  request: rawRequest(server.url, s.path, s.headers, s.body!),
  count: Number(values.streams),
  rampMs: Number(values.ramp) * 1000,
  events: layout.length,
  timeoutMs: 60_000,
};
if (values.twice) {
  // The same load once before, unmeasured: what is left is the steady state, V8's compiler done with the path.
  await pacedLoad(load);
  await settle(server);
}
const perf = values.perf
  ? spawn('perf', ['stat', '-e', values.perf, '-p', String(server.pid)], { stdio: ['ignore', 'ignore', 'pipe'] })
  : values.record
    ? spawn('perf', ['record', '-k', 'mono', '-e', 'cpu-clock', '-g', '-o', values.record, '-p', String(server.pid)], {
        stdio: ['ignore', 'ignore', 'pipe'],
      })
    : undefined;
let perfOut = '';
perf?.stderr!.on('data', (d: Buffer) => (perfOut += d.toString()));
const cpuBefore = treeCpuSeconds(server.pid)!;
// User and system time of the server process alone.
const userSystem = () => statUserSystemSeconds(readFileSync(`/proc/${server.pid}/stat`, 'utf8'));
const ticksBefore = userSystem();
const measuredFrom = Number(process.hrtime.bigint() / 1000n);
const { records, seconds } = await pacedLoad(load);
const cpu = treeCpuSeconds(server.pid)! - cpuBefore;
const [userSeconds, systemSeconds] = userSystem().map((t, i) => t - ticksBefore[i]!);
const rss = server.peakRssMiB();
if (perf) {
  perf.kill('SIGINT');
  await new Promise((resolve) => perf.once('exit', resolve));
}
// The mock's stdout (its log, and --trace-gc's lines) is removed when it stops.
const gcLines =
  values.gc && who === 'mock'
    ? readFileSync(stdout, 'utf8')
        .split('\n')
        .filter((l) => /Scavenge|Mark-Compact|Mark-sweep/.test(l))
    : [];
// The mock's own figures: how late it wrote the first events against each request's arrival plus the wait.
const own =
  who === 'mock'
    ? await fetch(new URL('/__admin/streams', server.url))
        .then((r) => r.json() as Promise<{ lateness?: unknown }>)
        .then((j) => JSON.stringify(j.lateness))
        .catch((e: Error) => e.message)
    : undefined;
await server.stop();
const f = lateness(records, layout, plan);
process.stdout.write(
  `${who}: ${f.completed}/${f.streams} complete, lateness p50 ${f.latenessP50Ms.toFixed(1)} p99 ${f.latenessP99Ms.toFixed(1)} max ${f.latenessMaxMs.toFixed(1)} ms, first token p99 ${f.firstTokenP99Ms.toFixed(1)} ms, CPU ${cpu.toFixed(2)} s = ${((cpu * 1e6) / f.tokens).toFixed(1)} µs/token (user ${userSeconds!.toFixed(2)} s, system ${systemSeconds!.toFixed(2)} s), peak RSS ${rss?.toFixed(1)} MiB, ${seconds.toFixed(1)} s\n`,
);
if (own) process.stdout.write(`the mock's own lateness: ${own}\n`);
if (perf) process.stdout.write(perfOut);
if (values.phases) process.stdout.write(byPhase(records, layout));
if (values.gc && who === 'mock') {
  const lines = gcLines;
  const ms = (kind: RegExp) =>
    lines
      .filter((l) => kind.test(l))
      .map((l) => Number(/, ([\d.]+) \/ [\d.]+ ms/.exec(l)?.[1] ?? 0))
      .reduce((a, b) => a + b, 0);
  process.stdout.write(
    `${lines.map((l) => `  ${l.replace(/^\[[^\]]*\]\s*/, '').slice(0, 110)}\n`).join('')}gc: ${lines.filter((l) => /Scavenge/.test(l)).length} scavenges (${ms(/Scavenge/).toFixed(1)} ms), ${lines.filter((l) => /Mark/.test(l)).length} mark-compacts (${ms(/Mark/).toFixed(1)} ms) over the whole process\n`,
  );
}
if (values.prof) process.stdout.write(profileReport(dir, ROOT, Number(values.top), measuredFrom, 'under the load'));
process.exit(0);
