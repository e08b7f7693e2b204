// The child processes the tests start: their environment, the command line to start, and a port for one to listen on.
import { once } from 'node:events';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import { ROOT } from '../../src/lib/paths.js';

/** The caller's environment, without the coverage collector (only this process's src/ counts), with `extra` on top. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // Empty, not left out: Node.js gives a child the parent's NODE_V8_COVERAGE whenever its environment has none.
  return { ...process.env, NODE_V8_COVERAGE: '', ...extra };
}

/** A free TCP port on 127.0.0.1, for a child that takes its port from its arguments (free when asked; the child
 * takes it a moment later). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** The command line as a child runs it: Node.js's arguments before the command's, and the environment to give it. */
export interface Cli {
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

let built: boolean | undefined;

/** Whether dist/ is a build of src/ as it is: npm ci and npm run build leave it so; an edit of src/ since does not. */
export const builtIsCurrent = (): boolean => (built ??= staleOutputs(ROOT).length === 0);

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
  );
}

/** Source files whose built .js in dist/ is missing or older than the source: dist/ needs a build. */
export function staleOutputs(root: string): string[] {
  const src = join(root, 'src');
  return walk(src)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .filter((f) => {
      const out = join(root, 'dist', relative(src, f).replace(/\.ts$/, '.js'));
      return !existsSync(out) || statSync(out).mtimeMs < statSync(f).mtimeMs;
    })
    .map((f) => relative(root, f));
}

/**
 * How the tests start the command line: the built program (dist/cli/main.js), as users run it, when it is a build of
 * src/ as it is; else src/cli/main.ts through tsx, so that no test runs a stale build. The built program starts in a
 * third of the CPU time (tsx transforms and resolves every module of src/ on each start), and runs without the coverage
 * collector, which counts src/ only. `extra` goes on top of the environment.
 */
export function cli(extra: Record<string, string> = {}): Cli {
  return builtIsCurrent()
    ? { args: [join(ROOT, 'dist', 'cli', 'main.js')], env: childEnv(extra) }
    : {
        // tsx as this file resolves it: the child may start in another folder.
        args: ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'cli', 'main.ts')],
        env: { ...process.env, ...extra },
      };
}
