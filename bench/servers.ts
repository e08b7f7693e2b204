import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import type { Answer } from './baseline.js';

/** The project root (bench/ sits in it). */
export const ROOT = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
// UAM_BENCH_CLI measures another build of the mock (an A/B comparison of a change) instead of dist/.
const CLI = process.env.UAM_BENCH_CLI ?? join(ROOT, 'dist', 'cli', 'main.js');

/** True when `taskset` can pin processes and the machine has at least two cores to split. */
export const canPin = (): boolean =>
  cpus().length >= 2 && spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;

/**
 * Runs this very script again pinned to `core` (the load generator's), waits for it and exits with its
 * code; returns only in the pinned run, or where pinning is not possible.
 */
export function pinSelf(core: number): void {
  if (process.env.UAM_BENCH_PINNED === '1' || !canPin()) return;
  const env = { ...process.env, UAM_BENCH_PINNED: '1' };
  const child = spawnSync(
    'taskset',
    ['-c', String(core), process.execPath, ...process.execArgv, ...process.argv.slice(1)],
    { stdio: 'inherit', env },
  );
  process.exit(child.status ?? 1);
}

/** Prefixes a command with `taskset -c CORE` when pinning is possible. */
export const pinned = (core: number | null, command: string[]): string[] =>
  core === null ? command : ['taskset', '-c', String(core), ...command];

function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/** Builds dist/ with tsc when it is missing or older than src/; returns what was done. */
export function ensureBuilt(): string {
  if (process.env.UAM_BENCH_CLI) return `measuring ${CLI}`;
  // The build is tsc and then the generated validators and token tables (npm run build): without the
  // second step the mock would compile its schemas at every start and the figures would not be the
  // ones users get from an installed package.
  const generated = join(ROOT, 'dist', 'generated', 'validators.cjs');
  const sources = Math.max(newest(join(ROOT, 'src')), newest(join(ROOT, 'schemas')));
  if (
    existsSync(CLI) &&
    existsSync(generated) &&
    Math.min(statSync(CLI).mtimeMs, statSync(generated).mtimeMs) >= sources
  )
    return 'dist/ is up to date';
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.json')],
    { encoding: 'utf8' },
  );
  if (!existsSync(CLI)) throw new Error(`build failed:\n${tsc.stdout}${tsc.stderr}`);
  const gen = spawnSync(process.execPath, [join(ROOT, 'scripts', 'generate.mjs')], { encoding: 'utf8', cwd: ROOT });
  if (gen.status !== 0) throw new Error(`generating dist/generated failed:\n${gen.stdout}${gen.stderr}`);
  return tsc.status === 0
    ? 'built dist/ (tsc, then scripts/generate.mjs)'
    : `built dist/ (tsc reported errors; running what it emitted):\n${tsc.stdout.slice(0, 2000)}`;
}

/**
 * A reference server of bench/ (baseline.ts, floor.ts) as one plain JavaScript file, so it starts
 * without a TypeScript loader in its process. It is written under node_modules/.cache so that the
 * packages it imports resolve as they do for the project.
 */
export function referenceScript(name: 'baseline' | 'floor' | 'aimock' | 'pacedFloor'): string {
  const source = readFileSync(join(ROOT, 'bench', `${name}.ts`), 'utf8');
  const out = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  });
  const dir = join(ROOT, 'node_modules', '.cache', 'uam-bench');
  mkdirSync(dir, { recursive: true });
  // Named by checkout: worktrees that share one node_modules must not run each other's references.
  const file = join(dir, `${name}.${createHash('sha1').update(ROOT).digest('hex').slice(0, 8)}.mjs`);
  writeFileSync(file, out.outputText);
  return file;
}

/** A fresh scratch folder for answers and the transpiled baseline. */
export function workDir(): string {
  const dir = join(tmpdir(), `uam-bench-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** `serve --help` of the CLI measured, read once: which flags it has decides the variants the bench can run. */
let serveHelp: string | undefined;
const helpOfServe = (): string =>
  (serveHelp ??= spawnSync(process.execPath, [CLI, 'serve', '--help'], { encoding: 'utf8' }).stdout ?? '');

/** The mock's `serve` flags that turn its logging off (the "silent" variant), if the CLI has them. */
export function silentFlags(): string[] {
  return helpOfServe().includes('--log-level') ? ['--log-level', 'silent'] : [];
}

/** The mock's `serve` flags that turn GET /metrics off (`--metrics off`), if the CLI has them; null when it has none
 * (an older build measured with UAM_BENCH_CLI): its metrics' cost is then not measured. */
export function metricsOffFlags(): string[] | null {
  return helpOfServe().includes('--metrics') ? ['--metrics', 'off'] : null;
}

// USER_HZ: fixed at 100 on Linux for every architecture Node runs on.
const TICKS_PER_SECOND = 100;

/** User + system CPU seconds in the fields of a /proc/PID/stat line: the process's own, and with `children`
 * those of its children it has waited for too. */
export function statCpuSeconds(stat: string, children = false): number {
  // Fields 14-17 of /proc/PID/stat, after the command name in parentheses, in clock ticks.
  const fields = statFields(stat);
  const ticks = [11, 12, ...(children ? [13, 14] : [])].reduce((sum, i) => sum + Number(fields[i]), 0);
  return ticks / TICKS_PER_SECOND;
}

/** User and system CPU seconds of a process alone (fields 14 and 15 of /proc/PID/stat). */
export function statUserSystemSeconds(stat: string): [number, number] {
  const fields = statFields(stat);
  return [Number(fields[11]) / TICKS_PER_SECOND, Number(fields[12]) / TICKS_PER_SECOND];
}

// The fields of /proc/PID/stat after the command name in parentheses (which may hold spaces), from field 3 on.
const statFields = (stat: string): string[] => stat.slice(stat.lastIndexOf(')') + 2).split(' ');

/**
 * CPU seconds (user + system) of a process and of every process under it, the running ones and those
 * already waited for; null where /proc is not available.
 */
export function treeCpuSeconds(pid: number): number | null {
  try {
    let total = statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'), true);
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      for (const child of children ? children.split(' ') : []) total += treeCpuSeconds(Number(child)) ?? 0;
    }
    return total;
  } catch {
    return null;
  }
}

/**
 * CPU seconds the processes on a core have used (user, nice and system time) since boot, from /proc/stat;
 * null where it cannot be read. Less a server's own CPU over the same interval, what other processes took
 * of its core (interrupts, loopback's packets among them, are left out of both).
 */
export function coreBusySeconds(core: number): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`cpu${core} `));
    if (!line) return null;
    const [user, nice, system] = line.split(/\s+/).slice(1).map(Number);
    return (user! + nice! + system!) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** A server process started for one measurement. */
export interface Server {
  readonly url: string;
  readonly pid: number;
  /** Milliseconds from spawn until the server printed its URL. */
  readonly listenMs: number;
  /** Peak RSS of the process so far in MiB (VmHWM), or null where /proc is not available. */
  peakRssMiB(): number | null;
  /** CPU seconds (user + system) the process has used so far, or null where /proc is not available. */
  cpuSeconds(): number | null;
  stop(): Promise<void>;
}

/**
 * Spawns `command`, waits for "listening on URL" on its stdout, and returns the running server. With
 * `stdoutFile`, the server's stdout is that file (as a process manager that appends to a log file
 * would have it): the URL is read from the file, which is removed when the server stops.
 */
export function startProcess(
  command: string[],
  core: number | null,
  extraNodeArgs: string[] = [],
  stdoutFile?: string,
): Promise<Server> {
  const [exe, ...args] = pinned(core, [process.execPath, ...extraNodeArgs, ...command]);
  const started = performance.now();
  const fd = stdoutFile === undefined ? undefined : openSync(stdoutFile, 'w');
  const child: ChildProcess = spawn(exe!, args, { stdio: ['ignore', fd ?? 'pipe', 'pipe'], cwd: ROOT });
  if (fd !== undefined) closeSync(fd);
  let output = '';
  return new Promise<Server>((resolve, reject) => {
    let poll: NodeJS.Timeout | undefined;
    const onExit = (code: number | null) => {
      clearInterval(poll);
      reject(
        new Error(
          `server exited (${code}) before listening: ${command.join(' ')}\n${output.slice(-2000)}${stdoutFile ? readFileSync(stdoutFile, 'utf8').slice(-2000) : ''}`,
        ),
      );
    };
    child.once('exit', onExit);
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const found = (text: string): boolean => {
      const m = /listening on (http:\/\/\S+)/.exec(text);
      if (!m) return false;
      child.off('exit', onExit);
      resolve(server(child, m[1]!, performance.now() - started, stdoutFile));
      return true;
    };
    if (stdoutFile !== undefined) {
      poll = setInterval(() => {
        if (found(readFileSync(stdoutFile, 'utf8').slice(0, 4096))) clearInterval(poll);
      }, 5);
      return;
    }
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      if (!found(output)) return;
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume(); // keep draining so the child never blocks on a full pipe
    });
  });
}

function server(child: ChildProcess, url: string, listenMs: number, stdoutFile?: string): Server {
  const exited = new Promise<void>((resolve) =>
    child.exitCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
  return {
    url,
    pid: child.pid!,
    listenMs,
    peakRssMiB: () => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        return m ? Number(m[1]) / 1024 : null;
      } catch {
        return null;
      }
    },
    cpuSeconds: () => {
      try {
        return statCpuSeconds(readFileSync(`/proc/${child.pid}/stat`, 'utf8'));
      } catch {
        return null;
      }
    },
    // SIGTERM lets the mock drain; a second one makes it exit at once (a --cpu-prof profile is still
    // written then); SIGKILL only if it is stuck.
    stop: async () => {
      child.kill('SIGTERM');
      const again = setTimeout(() => child.kill('SIGTERM'), 5000);
      const kill = setTimeout(() => child.kill('SIGKILL'), 15000);
      await exited;
      clearTimeout(again);
      clearTimeout(kill);
      if (stdoutFile !== undefined) rmSync(stdoutFile, { force: true });
    },
  };
}

/**
 * The flags `npm start` gives `node` before the CLI (package.json's `start` script, the one place they
 * are written), so the bench runs the mock as `npm start` does: V8 sizes its young generation when the
 * process starts, and the CLI cannot change that for itself.
 */
export function startNodeFlags(script?: string): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: { start: string };
    bin: Record<string, string>;
  };
  const bin = Object.values(pkg.bin)[0]!; // the CLI the start script runs, as the package names it
  const start = script ?? pkg.scripts.start;
  const words = start.trim().split(/\s+/);
  const cli = words.indexOf(bin);
  if (words[0] !== 'node' || cli < 0)
    throw new Error(`package.json's start script is not "node [flags] ${bin} ...": ${start}`);
  return words.slice(1, cli);
}

/** Starts a build's CLI (`serve`) on a free port as `npm start` runs it; with `stdoutFile`, its stdout (the request
 * log) goes to that file. */
export const startServe = (
  cli: string,
  core: number | null,
  flags: string[],
  nodeArgs: string[] = [],
  stdoutFile?: string,
): Promise<Server> =>
  startProcess(
    [cli, 'serve', '--port', '0', '--host', '127.0.0.1', ...flags],
    core,
    [...startNodeFlags(), ...nodeArgs],
    stdoutFile,
  );

/** Starts the built mock on a free port as `npm start` runs it; with `stdoutFile`, its stdout (the request log) goes to
 * that file. */
export const startMock = (
  core: number | null,
  flags: string[],
  nodeArgs: string[] = [],
  stdoutFile?: string,
): Promise<Server> => startServe(CLI, core, flags, nodeArgs, stdoutFile);

/** Starts aimock (bench/aimock.ts) on a free port, its stdout to `stdoutFile`; `args` are the script's own. */
export const startAimock = (
  core: number | null,
  script: string,
  stdoutFile?: string,
  args: string[] = [],
): Promise<Server> => startProcess([script, ...args], core, [], stdoutFile);

/** Starts a reference server (the baseline or the floor) with a fixed answer written to `dir`. */
export function startReference(
  core: number | null,
  script: string,
  dir: string,
  name: string,
  fixed: Answer,
  nodeArgs: string[] = [],
): Promise<Server> {
  const file = join(dir, `${name}.answer.json`);
  writeFileSync(
    file,
    JSON.stringify({
      status: fixed.status,
      contentType: fixed.contentType,
      stream: fixed.stream,
      body: fixed.body.toString('base64'),
    }),
  );
  return startProcess(
    [script, '--answer', file, '--schema', join(ROOT, 'schemas', 'chat-request.json')],
    core,
    nodeArgs,
  );
}

/** Path of the built CLI. */
export const cliPath = (): string => CLI;
