/**
 * The shared-state phase: the same requests on a mock with its state in memory and on one with
 * `--state redis://` (a redis-server started here on a free loopback port), for a key with a rate limit,
 * so each request pays the admission, the fault-rule claim and the journal write.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { measure, type Context } from './phases.js';
import type { LoadFigures } from './report.js';
import type { StateBench, StateRow } from './results.js';
import { API_KEY, meScenario, type Scenario } from './scenarios.js';
import { startMock } from './servers.js';

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

async function startRedis(dir: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out.slice(-500)}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) resolve();
    });
  });
  child.removeAllListeners('exit');
  child.stdout!.resume();
  child.stderr!.resume();
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The requests of the phase: a cheap one (GET /v1/me) where the state's cost shows most, and a chat completion. */
export function stateScenarios(chat: Scenario): Scenario[] {
  return [meScenario(), chat];
}

/** Each scenario on a fresh in-memory mock, then on a fresh mock whose state is in Redis; `rounds` times, figures are
 * medians. */
export async function statePhase(
  ctx: Context,
  scenarios: Scenario[],
  combine: (f: LoadFigures[]) => LoadFigures,
): Promise<StateBench> {
  const version = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (version.status !== 0)
    return { available: false, reason: 'redis-server is not on PATH (apt-get install -y redis-server)' };
  const dir = join(ctx.dir, 'redis');
  mkdirSync(dir, { recursive: true });
  // A limit far above what the run sends: every request is admitted and counted, none refused.
  const config = join(ctx.dir, 'state-config.json');
  writeFileSync(
    config,
    JSON.stringify({ keys: [{ key: API_KEY, label: 'bench', rateLimit: { requests: 1_000_000_000 } }] }),
  );
  const redis = await startRedis(dir);
  const rows: StateRow[] = [];
  try {
    for (const s of scenarios) {
      const memory: LoadFigures[] = [];
      const shared: LoadFigures[] = [];
      for (let round = 0; round < Math.max(1, ctx.rounds); round++) {
        memory.push(
          await measure(ctx, await startMock(ctx.serverCore, [...ctx.mockFlags, '--config', config]), s, 'memory'),
        );
        shared.push(
          await measure(
            ctx,
            await startMock(ctx.serverCore, [...ctx.mockFlags, '--config', config, '--state', redis.url]),
            s,
            'redis',
          ),
        );
      }
      rows.push({ name: s.name, title: s.title, memory: combine(memory), redis: combine(shared) });
    }
  } finally {
    await redis.stop();
  }
  return { available: true, redisVersion: /v=(\S+)/.exec(version.stdout)?.[1] ?? 'unknown', rows };
}
