// The built server (dist/), started as `npm start` starts it, in a child process of its own; and what the admin API
// and /metrics say about what it holds.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../src/lib/paths.js';
import { childEnv } from '../support/index.js';

const CLI = join(ROOT, 'dist', 'cli', 'main.js');
// A server that prints no banner within this time fails the battery instead of hanging it.
const START_PATIENCE_MS = 30_000;

/** A built server running in a child process. */
export interface BuiltServer {
  readonly url: string;
  readonly port: number;
  /** Stops it (SIGTERM to its pid) and removes its configuration. */
  stop(): Promise<void>;
}

/** Starts `dist/cli/main.js serve` with `config` (a configuration file's content) on a free port. */
export async function startBuilt(config: Record<string, unknown>): Promise<BuiltServer> {
  if (!existsSync(CLI))
    throw new Error(`${CLI} is missing: the battery runs the built server. Run \`npm run build\` (npm ci runs it).`);
  const dir = mkdtempSync(join(tmpdir(), 'hostile-'));
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(config));
  // As `npm start` runs it (package.json), with a port of its own and no request log.
  const child: ChildProcess = spawn(
    process.execPath,
    ['--max-semi-space-size=8', CLI, 'serve', '--config', file, '--port', '0', '--log-level', 'silent'],
    { cwd: ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c));
  let timer: NodeJS.Timeout | undefined;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (c: Buffer) => {
        out += c;
        const m = /listening on (http:\/\/\S+)\n/.exec(out);
        if (m) resolve(m[1]!);
      });
      void exited.then((code) => reject(new Error(`serve exited with ${code}: ${err}`)));
      timer = setTimeout(
        () => reject(new Error(`serve printed no banner within ${START_PATIENCE_MS} ms: ${out}${err}`)),
        START_PATIENCE_MS,
      );
    }).finally(() => clearTimeout(timer));
    return { url, port: Number(new URL(url).port), stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** What a server holds that must come back to rest: open streams, and each model's running and waiting requests. */
export interface Held {
  /** GET /__admin/streams' `open`. */
  readonly streams: number;
  /** GET /metrics' unified_ai_mock_streams_open. */
  readonly streamsGauge: number;
  /** GET /__admin/latency: `model running/waiting` of every model with either above 0. */
  readonly busy: readonly string[];
  /** GET /metrics: every unified_ai_mock_requests_running or _waiting series above 0. */
  readonly busyGauges: readonly string[];
}

/** What the server holds now, from the admin API and /metrics. */
export async function held(url: string): Promise<Held> {
  const [streams, latency, metrics] = await Promise.all([
    fetch(`${url}/__admin/streams`).then((r) => r.json() as Promise<{ open: number }>),
    fetch(`${url}/__admin/latency`).then(
      (r) => r.json() as Promise<{ models: { model: string; running: number; waiting: number }[] }>,
    ),
    fetch(`${url}/metrics`).then((r) => r.text()),
  ]);
  const gauge = /^unified_ai_mock_streams_open (\S+)$/m.exec(metrics);
  return {
    streams: streams.open,
    streamsGauge: gauge ? Number(gauge[1]) : Number.NaN,
    busy: latency.models.filter((m) => m.running || m.waiting).map((m) => `${m.model} ${m.running}/${m.waiting}`),
    busyGauges: metrics
      .split('\n')
      .filter((line) => /^unified_ai_mock_requests_(running|waiting)\{/.test(line) && !/ 0$/.test(line)),
  };
}

/** Whether what a server holds is at rest: nothing open, running or waiting. */
export const atRest = (h: Held): boolean =>
  h.streams === 0 && h.streamsGauge === 0 && h.busy.length === 0 && h.busyGauges.length === 0;
