// The project's test runner: uvu's arguments (`[dir] [pattern]`, the files under dir whose path matches pattern),
// each file run alone in a child process of its own (test/support/runFile.ts), as many at once as the machine has
// cores, so that no file's globals, timers or listeners reach another. The children inherit the environment: under
// c8, NODE_V8_COVERAGE collects their coverage. Each file's report is printed whole when the file ends; then the
// slowest files, the files that failed and the totals. The children serve test/support/uvu.ts for 'uvu', so that a
// suite whose before or after hook throws fails the run, printed with its suite (under uvu's bin.js, a before hook
// that throws passes the run in silence).
//   node --import tsx test/run.ts test '\.test\.ts$'              every test (npm test runs this under c8)
//   node --import tsx test/run.ts test/domain 'journal\.test\.ts$'  the matching files of one folder
//   --bail (-b): stop at the first suite that fails (no file starts after it; those running finish)
//   --jobs N (-j N): how many files run at once (default: one more than os.availableParallelism(), the cores
//   Node.js may use)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, styleText } from 'node:util';
import { parse } from 'uvu/parse';
import { childEnv } from './support/child.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    bail: { type: 'boolean', short: 'b', default: false },
    jobs: { type: 'string', short: 'j' },
  },
});
const [dir, pattern] = positionals;
// One more than the cores: a file that waits on its sockets or timers leaves its core to the extra one.
const jobs = values.jobs === undefined ? availableParallelism() + 1 : Number(values.jobs);
if (!Number.isInteger(jobs) || jobs < 1) throw new Error(`--jobs takes a whole number above 0, not ${values.jobs}`);
// As uvu's bin.js does: its report keeps its colours through a pipe (CI's log, this runner's children).
process.env.FORCE_COLOR = '1';

const CHILD = fileURLToPath(new URL('./support/runFile.ts', import.meta.url));
/** How many of the slowest files the summary lists. */
const SLOWEST = 10;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Each file's duration in the last runs, so that the next run starts the longest first and ends sooner (RUN_DURATIONS
 * names another file: test/run.test.ts gives its runs one of their own). */
const DURATIONS = process.env.RUN_DURATIONS ?? `${ROOT}node_modules/.cache/unified-ai-mock/test-durations.json`;

/** One file's run: its report as uvu printed it (without uvu's totals), its duration, its totals, why it failed. */
interface FileRun {
  readonly name: string;
  /** Its path from the project's root: its key among the durations. */
  readonly path: string;
  readonly report: string;
  readonly ms: number;
  /** The CPU time its process and the processes it started took (test/support/runFile.ts measures it); undefined when
   * the process ended before it could say. */
  readonly cpuMs?: number;
  /** uvu's totals of the file; undefined when the child ended before printing them. */
  readonly totals?: { total: number; passed: number; skipped: number };
  /** Why the file failed; undefined when it passed. */
  readonly failed?: string;
}

// uvu's totals, as its exec prints them at the end of a file's run, colours and all.
const C = '(?:\\x1b\\[[0-9;]*m)*';
const TOTALS = new RegExp(
  `\\n {2}Total: {5}(\\d+)${C}\\n${C} {2}Passed: {4}(\\d+)${C}\\n {2}Skipped: {3}${C}(\\d+)${C}\\n {2}Duration: {2}[^\\n]*\\n\\n?`,
  'g',
);

/** A child's output without uvu's totals (what it printed after them stays), and the totals it printed last. */
function splitReport(output: string): { report: string; totals?: FileRun['totals'] } {
  const found = [...output.matchAll(TOTALS)].at(-1);
  if (!found) return { report: output };
  return {
    report: output.slice(0, found.index) + output.slice(found.index + found[0].length),
    totals: { total: Number(found[1]), passed: Number(found[2]), skipped: Number(found[3]) },
  };
}

/** Why a file whose child ended this way failed; undefined when it passed. */
function failure(code: number | null, signal: NodeJS.Signals | null, totals: FileRun['totals']): string | undefined {
  const ended = signal ? `killed by ${signal}` : `exit code ${code}`;
  if (!totals) return `ended (${ended}) before uvu's report of it was complete`;
  if (totals.passed < totals.total) return `${totals.total - totals.passed} of ${totals.total} tests did not pass`;
  if (code !== 0 || signal) return `its tests passed, but its process ended with ${ended}`;
  return undefined;
}

const running = new Set<ChildProcess>();
/**
 * The files whose processes run without the coverage collector (NODE_V8_COVERAGE), by their path from the root. The
 * mutation test plays hundreds of runs of the conformance runner against the mock to score the suite's cases: what it
 * measures is the suite, not which lines of src/ run (the runner's and the mock's own tests cover those), and counting
 * blocks there costs a seventh of its CPU time, the most of any file.
 */
const UNCOVERED = new Set(['test/mutation/mutation.test.ts']);

/** Where each file's process writes the CPU time it took (RUN_CPU_FILE), one file per file run. */
const cpuDir = mkdtempSync(join(tmpdir(), 'uam-run-cpu-'));
let runs = 0;

function cpuOf(cpuFile: string): number | undefined {
  try {
    return Number(readFileSync(cpuFile, 'utf8'));
  } catch {
    return undefined; // the process ended before its exit handler ran (killed)
  }
}

/** Runs one file in a child of its own; resolves once the child has exited, with everything it printed. */
function runFile(file: string, name: string): Promise<FileRun> {
  const started = performance.now();
  const cpuFile = join(cpuDir, String(runs++));
  const child = spawn(process.execPath, [...process.execArgv, CHILD, file, name, ...(values.bail ? ['--bail'] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...(UNCOVERED.has(relative(ROOT, file)) ? childEnv() : process.env), RUN_CPU_FILE: cpuFile },
  });
  running.add(child);
  // The child's stdout and stderr in the order they came: the report reads as it was written.
  const chunks: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.on('error', (err) => chunks.push(Buffer.from(`\n${err.stack ?? err.message}\n`)));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child);
      const { report, totals } = splitReport(Buffer.concat(chunks).toString('utf8'));
      const failed = failure(code, signal, totals);
      const ms = performance.now() - started;
      const cpuMs = cpuOf(cpuFile);
      resolve({
        name,
        path: relative(ROOT, file),
        report,
        ms,
        ...(cpuMs === undefined ? {} : { cpuMs }),
        ...(totals ? { totals } : {}),
        ...(failed ? { failed } : {}),
      });
    });
  });
}

// A run stopped from outside (a CI job cancelled) stops its children: none is left running unseen. (Ctrl-C reaches
// them on its own: they are in the terminal's process group.)
process.once('SIGTERM', () => {
  for (const child of running) child.kill('SIGTERM');
  process.exit(143);
});

/** A fresh checkout's durations: the files that took longest in a full run on two cores, so that a first run starts
 * them first too. Only the order depends on it; the cache of the last runs takes its place once there is one. */
const SEED = `${ROOT}test/durations.json`;

function readDurations(): Record<string, number> {
  for (const file of [DURATIONS, SEED]) {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
    } catch {
      // none yet: the next
    }
  }
  return {}; // neither: the files start in uvu's order
}

/**
 * What the build generates (the schemas' validators as code, the tokenizer's tables as JSON), generated here from
 * src/ for this run: each file's process loads them (src/lib/generatedDir.ts) instead of compiling every schema and
 * reading the tables anew, a second of CPU a file. A run started by a test of this runner uses its parent's.
 */
async function generate(): Promise<(() => void) | undefined> {
  if (process.env.UNIFIED_AI_MOCK_GENERATED_DIR) return undefined;
  const into = mkdtempSync(join(tmpdir(), 'uam-generated-'));
  const removed = () => rmSync(into, { recursive: true, force: true });
  try {
    process.env.UNIFIED_AI_MOCK_GENERATED_DIR = into;
    const [{ writeGenerated }, { writeRanks }, { GENERATED_FILE }, { ENCODINGS }] = await Promise.all([
      import('../src/contract/validators/generate.js'),
      import('../src/text/ranks.js'),
      import('../src/contract/validators/generated.js'),
      import('../src/text/tokenizer.js'),
    ]);
    writeGenerated(GENERATED_FILE);
    writeRanks(ENCODINGS);
    return removed;
  } catch (err) {
    // The files compile and read what they need themselves, as without a build; a broken schema fails its tests.
    delete process.env.UNIFIED_AI_MOCK_GENERATED_DIR;
    removed();
    process.stderr.write(
      `test/run.ts: nothing generated for the run (${(err as Error).message}); each file computes it\n`,
    );
    return undefined;
  }
}
const removeGenerated = await generate();

const { suites } = await parse(dir, pattern);
const known = readDurations();
// The longest first, as far as the last runs tell: a long file started last would end the run alone. A file with no
// duration yet (new, or a fresh checkout) starts before those that have one, in uvu's order.
const last = (file: string) => known[relative(ROOT, file)] ?? Infinity;
const order = suites.map((suite, i) => ({ ...suite, i })).sort((a, b) => last(b.file) - last(a.file) || a.i - b.i);

const started = performance.now();
const done: FileRun[] = [];
let next = 0;
let stop = false;

/** Takes the next file not yet started, until none is left or --bail has seen a failure. */
async function worker(): Promise<void> {
  while (!stop && next < order.length) {
    const { file, name } = order[next++]!;
    const result = await runFile(file, name);
    done.push(result);
    // Each file's report in one piece, as it ends; uvu prints an empty line between files.
    process.stdout.write(`${done.length > 1 ? '\n' : ''}${result.report}`);
    if (result.failed && values.bail) stop = true;
  }
}
await Promise.all(Array.from({ length: Math.min(jobs, order.length) }, worker));

try {
  // Read again: another run (a test of this runner) may have written since. Renamed into place: never half written.
  const durations = { ...readDurations(), ...Object.fromEntries(done.map((f) => [f.path, Math.round(f.ms)])) };
  mkdirSync(dirname(DURATIONS), { recursive: true });
  writeFileSync(`${DURATIONS}.${process.pid}`, `${JSON.stringify(durations, null, 1)}\n`);
  renameSync(`${DURATIONS}.${process.pid}`, DURATIONS);
} catch {
  // Only the order of the next run depends on it.
}

removeGenerated?.();
rmSync(cpuDir, { recursive: true, force: true });

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
let summary = '';
if (done.length > 1) {
  const slowest = [...done].sort((a, b) => b.ms - a.ms).slice(0, SLOWEST);
  // The time each took, and its CPU time beside it: on a shared machine the wall time says how busy the cores were,
  // the CPU time what the file costs.
  const cpu = (f: FileRun) => (f.cpuMs === undefined ? '' : `${seconds(f.cpuMs)} CPU`);
  const cpuTotal = done.reduce((n, f) => n + (f.cpuMs ?? 0), 0);
  summary += `\n  ${styleText('bold', `Slowest ${slowest.length} of ${done.length} files`)} (${jobs} at once; ${seconds(cpuTotal)} CPU in all):\n`;
  summary += slowest.map((f) => `  ${seconds(f.ms).padStart(8)}  ${cpu(f).padStart(12)}  ${f.name}\n`).join('');
}
const failed = done.filter((f) => f.failed);
if (failed.length > 0) {
  summary += `\n  ${styleText(['bold', 'red'], `Failed: ${failed.length} of ${done.length} files`)}\n`;
  summary += failed.map((f) => `    ${styleText('red', f.name)}: ${f.failed}\n`).join('');
}
const notRun = order.length - done.length;
if (notRun > 0) summary += `\n  ${styleText('yellow', `Not run (--bail): ${notRun} of ${order.length} files`)}\n`;
const sum = (key: 'total' | 'passed' | 'skipped') => done.reduce((n, f) => n + (f.totals?.[key] ?? 0), 0);
const code = failed.length > 0 ? 1 : 0;
// The totals as uvu prints them, last, where a reader of a long log looks first.
summary += `\n  Total:     ${sum('total')}`;
summary += styleText(code ? 'red' : 'green', `\n  Passed:    ${sum('passed')}`);
summary += `\n  Skipped:   ${sum('skipped') ? styleText('yellow', String(sum('skipped'))) : 0}`;
summary += `\n  Duration:  ${(performance.now() - started).toFixed(2)}ms\n\n`;
process.stdout.write(summary);
process.exitCode = code;
