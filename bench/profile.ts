/**
 * Profiles the built mock under one scenario's load: `node --import tsx bench/profile.ts NAME`
 * runs the mock with --cpu-prof (pinned like the benchmark), loads it, and prints where the CPU time
 * went, by function and by package. NAME is a load scenario (chat, chat-400, ...) or a linearity
 * request (edit-10, chat-1000, tts-2500, ...). With `--floor`, the stack floor (bench/floor.ts) is profiled
 * instead, under the same load and with the mock's answer, to compare where the two spend their time.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { profileReport } from './cpuprofile.js';
import { capture, load } from './load.js';
import { settle } from './phases.js';
import { loadScenarios, pairs } from './scenarios.js';
import {
  ROOT,
  canPin,
  ensureBuilt,
  pinSelf,
  referenceScript,
  silentFlags,
  startMock,
  startReference,
} from './servers.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    duration: { type: 'string' },
    connections: { type: 'string' },
    top: { type: 'string' },
    out: { type: 'string' },
    silent: { type: 'boolean' },
    floor: { type: 'boolean' },
  },
});
const name = positionals[0];
const all = [...loadScenarios(), ...pairs().flatMap((p) => [p.small, p.large])];
const s = all.find((x) => x.name === name);
if (!s) {
  process.stderr.write(
    `usage: bench/profile.ts NAME [--duration S] [--connections N] [--top N] [--out DIR] [--silent | --floor]\nNAME: ${all.map((x) => x.name).join(', ')}\n`,
  );
  process.exit(2);
}

pinSelf(1);
ensureBuilt();
const dir = values.out ?? mkdtempSync(join(tmpdir(), 'uam-prof-'));
// As `npm start` runs it, its request log to a file (--silent: logging off).
const profiling = ['--cpu-prof', '--cpu-prof-dir', dir];
let server = await startMock(
  canPin() ? 0 : null,
  values.silent ? silentFlags() : [],
  values.floor ? [] : profiling,
  join(dir, 'stdout.log'),
);
const connections = Number(values.connections ?? 50);
const answer = await capture(server.url, s);
if (values.floor) {
  await server.stop();
  server = await startReference(canPin() ? 0 : null, referenceScript('floor'), dir, s.name, answer, profiling);
}
await settle(server); // the tokenizer tables load in the background while the mock is idle
await load(server.url, s, connections, 2); // warm-up; start-up and warm-up are left out of the summary
const measuredFrom = Number(process.hrtime.bigint() / 1000n);
const result = await load(server.url, s, connections, Number(values.duration ?? 10));
await server.stop(); // the profile is written as the process exits
process.stdout.write(
  [
    `${s.title}: ${result.reqPerSec.toFixed(0)} req/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms (${result.unexpected} unexpected)`,
    profileReport(dir, ROOT, Number(values.top ?? 30), measuredFrom, 'under the measured load'),
  ].join('\n'),
);
process.exit(0);
