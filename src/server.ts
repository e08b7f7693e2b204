import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type AppHooks, type MockApp } from './app.js';
import type { ConfigInput } from './config.js';

/** A running mock: its base URL and a close function. */
export interface RunningMock extends MockApp {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  close(): Promise<void>;
}

/** Starts the mock on the configured host and port (0 picks a free port); resolves once it listens. */
export async function start(input: ConfigInput = {}, hooks: AppHooks = {}): Promise<RunningMock> {
  const mock = createApp(input, hooks);
  const { timeouts } = mock.config;
  const server = createServer({ requestTimeout: timeouts.requestMs, headersTimeout: timeouts.headersMs, keepAliveTimeout: timeouts.keepAliveMs }, mock.app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(mock.config.port, mock.config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = mock.config.host.includes(':') ? `[${mock.config.host}]` : mock.config.host;
  return {
    ...mock,
    url: `http://${host}:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
