// A server started as `npm start` runs it (state in memory, no logging here) loads neither the Redis
// client nor anything only a Redis state needs: each costs start-up time every user pays.
import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const PROBE = `
import Module from 'node:module';
const { start } = await import('./src/server/server.ts');
const mock = await start({ port: 0, host: '127.0.0.1' });
const res = await fetch(mock.url + '/v1/me', { headers: { authorization: 'Bearer sk-mock-default' } });
await mock.close();
const loaded = Object.keys(Module._cache).filter((f) => /node_modules[\\\\/](ioredis|pino)[\\\\/]/.test(f)).map((f) => f.replace(/.*node_modules[\\\\/]/, '').split(/[\\\\/]/)[0]);
console.log(JSON.stringify({ status: res.status, loaded: [...new Set(loaded)] }));
`;

test('a server with its state in memory loads no Redis client (nor pino, when it does not log)', () => {
  const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PROBE], { encoding: 'utf8', cwd: process.cwd(), timeout: 60_000 });
  assert.is(out.status, 0, out.stderr);
  const { status, loaded } = JSON.parse(out.stdout.trim().split('\n').pop()!) as { status: number; loaded: string[] };
  assert.is(status, 200);
  assert.equal(loaded, []);
});

test.run();
