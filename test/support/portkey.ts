// Portkey's AI Gateway (a devDependency), started on a free port for a test: the conformance runner's tests run the
// recipes of docs/conformance.md and docs/gateway.md through it.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { childEnv, freePort } from './child.js';
import { waitFor } from './wait.js';

/** A gateway process the test started. */
export interface Gateway {
  readonly url: string;
  stop(): Promise<void>;
}

/** The path of Portkey's start script, from its package's bin; one clear line when the package is missing. */
function portkeyScript(): string {
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve('@portkey-ai/gateway/package.json');
  } catch {
    throw new Error('@portkey-ai/gateway (a devDependency) is not installed: run npm install');
  }
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: string };
  return join(dirname(manifest), bin);
}

/** Starts Portkey on a free port; resolves once it says it is ready (it shows a spinner for a second first). */
export async function startPortkey(): Promise<Gateway> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [portkeyScript(), `--port=${port}`, '--headless'], {
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  // Portkey logs a stack trace on standard error for each 500 it answers; only the start's end is kept.
  child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill();
    await exited;
  };
  try {
    await waitFor(
      () => `Portkey to start on port ${port}:\n${out}`,
      () => out.includes('Ready for connections'),
      { on: [child.stdout!, 'data'], failOn: [child, 'exit'] },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { url: `http://127.0.0.1:${port}`, stop };
}
