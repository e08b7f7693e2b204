/**
 * Servers side by side: `node --import tsx bench/duel.ts [options] SERVER SERVER...` starts every SERVER
 * pinned to core 0 and loads them all at once, each with its own connections from core 1, then prints
 * each one's CPU time per answered request and its speed against the first. SERVER is `mock` (this
 * build as `npm start` runs it, its log to a file), `mock-silent` (logging off), `floor` (the stack
 * floor), `mock+FLAGS` (the mock with node flags added after the start script's, `mock+--max-semi-space-size=8`; several
 * joined by `+`), or the path of another build's `dist/cli/main.js` (run as `npm start` runs it).
 *
 * Why: one server at a time, two rounds of the same server differ by 10% and more on a shared host,
 * more than most changes (the bench loads its servers in turns, a slice at a time, for that reason). Side by side, a
 * neighbour that slows the core slows every
 * server alike, and their ratio moved by a few percent across rounds. The servers share the core's
 * caches and switch on it, so each one's µs per request is higher than it is alone: read the ratios.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { capture, load } from './load.js';
import { settle } from './phases.js';
import { median } from './report.js';
import { loadScenarios } from './scenarios.js';
import {
  canPin,
  ensureBuilt,
  pinSelf,
  referenceScript,
  startMock,
  startReference,
  startServe,
  type Server,
} from './servers.js';

const USAGE = `Usage: node --import tsx bench/duel.ts [options] SERVER SERVER...
  SERVER            mock | mock-silent | floor | mock+NODEFLAGS | path/to/dist/cli/main.js (another build)
  --scenario NAME   chat, chat-400, chat-401, images, tts, ... (default chat)
  --rounds N        rounds, the servers started fresh and in turned order each round (default 5)
  --duration S      measured seconds per round (default 4), after a 2 s warm-up
  --connections N   connections per server (default 50)
`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    scenario: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string' },
    help: { type: 'boolean' },
  },
});
const scenario = loadScenarios().find((s) => s.name === (values.scenario ?? 'chat'));
if (values.help || positionals.length < 2 || !scenario) {
  process.stdout.write(USAGE);
  process.exit(values.help ? 0 : 2);
}
const rounds = Number(values.rounds ?? 5);
const seconds = Number(values.duration ?? 4);
const connections = Number(values.connections ?? 50);
const core = canPin() ? 0 : null;
if (core === null)
  process.stdout.write(
    'cannot pin to cores (taskset or a second core missing): the servers share whatever the system gives them\n',
  );
else pinSelf(1);
process.stdout.write(`${ensureBuilt()}\n`);

const dir = mkdtempSync(join(tmpdir(), 'uam-duel-'));
const floorScript = positionals.includes('floor') ? referenceScript('floor') : '';
let answer: Awaited<ReturnType<typeof capture>> | undefined;

async function start(name: string, i: number): Promise<Server> {
  const log = join(dir, `${i}.log`);
  if (name === 'mock') return startMock(core, [], [], log);
  if (name === 'mock-silent') return startMock(core, ['--log-level', 'silent']);
  if (name === 'mock-unmetered') return startMock(core, ['--metrics', 'off'], [], log);
  if (name.startsWith('mock+')) return startMock(core, [], name.split('+').slice(1), log);
  if (name === 'floor') {
    if (!answer) {
      const mock = await startMock(null, ['--log-level', 'silent']);
      answer = await capture(mock.url, scenario!);
      await mock.stop();
    }
    return startReference(core, floorScript, dir, scenario!.name, answer);
  }
  return startServe(name, core, [], [], log);
}

const cost: number[][] = positionals.map(() => []);
const rss: number[][] = positionals.map(() => []);
for (let round = 0; round < rounds; round++) {
  // Every other round starts them in the other order, so no server is always the first to get the core.
  const order = positionals.map((_, i) => i);
  if (round % 2) order.reverse();
  const servers: Server[] = [];
  for (const i of order) {
    servers[i] = await start(positionals[i]!, i);
    await settle(servers[i]!);
  }
  await Promise.all(servers.map((s) => load(s.url, scenario, connections, 2)));
  const before = servers.map((s) => s.cpuSeconds() ?? Number.NaN);
  const loads = await Promise.all(servers.map((s) => load(s.url, scenario, connections, seconds)));
  const after = servers.map((s) => s.cpuSeconds() ?? Number.NaN);
  const line = positionals.map((name, i) => {
    const us = ((after[i]! - before[i]!) * 1e6) / loads[i]!.responses;
    cost[i]!.push(us);
    const peak = servers[i]!.peakRssMiB() ?? Number.NaN;
    rss[i]!.push(peak);
    return `${name}: ${loads[i]!.reqPerSec.toFixed(0)} req/s, ${us.toFixed(1)} µs/req, ${peak.toFixed(0)} MiB${loads[i]!.unexpected ? `, ${loads[i]!.unexpected} unexpected` : ''}`;
  });
  process.stdout.write(`round ${round + 1}: ${line.join(' | ')}\n`);
  await Promise.all(servers.map((s) => s.stop()));
}

process.stdout.write(
  `\n${scenario.title}, ${rounds} rounds of ${seconds} s; speed = the first server's µs per request / this one's, per round\n`,
);
for (const [i, name] of positionals.entries()) {
  const speed = cost[i]!.map((us, r) => cost[0]![r]! / us);
  process.stdout.write(
    `${name}: median ${median(cost[i]!).toFixed(1)} µs/req, peak RSS ${median(rss[i]!).toFixed(0)} MiB, speed ${median(speed).toFixed(3)}x (rounds: ${speed.map((x) => x.toFixed(3)).join(' ')})\n`,
  );
}
