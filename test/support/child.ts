// The child processes the tests start: their environment, and a port for one to listen on.
import { once } from 'node:events';
import { createServer } from 'node:net';

/** The caller's environment, without the coverage collector (only this process's src/ counts), with `extra` on top. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_V8_COVERAGE: _, ...env } = process.env;
  return { ...env, ...extra };
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
