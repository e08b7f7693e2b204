// A real redis-server for the state tests: started on a free loopback port in a temp dir, no persistence.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from '../support/index.js';

/** The redis-server on PATH, or undefined. */
export function findRedisServer(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  return found.status === 0 && path ? path : undefined;
}

/** One redis-server process of a test file; stop() and start() again keep the port (Redis "restarts"). */
export class TestRedis {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'uam-redis-'));

  private constructor(
    private readonly bin: string,
    readonly port: number,
  ) {}

  static async create(bin: string): Promise<TestRedis> {
    const redis = new TestRedis(bin, await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      this.bin,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    this.child = child;
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await waitFor(
      () => `redis-server to start on port ${this.port}:\n${out}`,
      () => out.includes('Ready to accept connections'),
      { on: [child.stdout!, 'data'], failOn: [child, 'exit'] },
    );
    child.stdout!.resume();
    child.stderr!.resume();
  }

  /** Stops the server; SIGKILL plays a crash. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    child.removeAllListeners('exit');
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  }

  /** Stops the process without ending it (SIGSTOP): its connections stay open, and nothing answers on them. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  /** Lets a paused process go on (SIGCONT): it answers what was sent to it meanwhile. */
  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
