// A server started as `npm start` runs it (state in memory, no logging here) loads neither the Redis
// client nor anything only a Redis state needs: each costs start-up time every user pays. Nor does it
// load Node's bundled fetch client (undici), which it never calls: about 13 MiB of RSS on Node 24, loaded
// on Node 22 and later by any ESM import of node:http (src/lib/cjs.ts).
import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const PROBE = `
import Module from 'node:module';
const { start } = await import('./src/server/server.ts');
const mock = await start({ port: 0, host: '127.0.0.1' });
const res = await fetch(mock.url + '/v1/me', { headers: { authorization: 'Bearer sk-mock-default' } });
await mock.close();
const loaded = Object.keys(Module._cache).filter((f) => /node_modules[\\\\/](ioredis|pino|prom-client)[\\\\/]/.test(f)).map((f) => f.replace(/.*node_modules[\\\\/]/, '').split(/[\\\\/]/)[0]);
console.log(JSON.stringify({ status: res.status, loaded: [...new Set(loaded)] }));
`;

test('a server with its state in memory loads no Redis client (nor pino, when it does not log, nor prom-client before a scrape)', () => {
  const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PROBE], {
    encoding: 'utf8',
    cwd: process.cwd(),
    timeout: 60_000,
  });
  assert.is(out.status, 0, out.stderr);
  const { status, loaded } = JSON.parse(out.stdout.trim().split('\n').pop()!) as { status: number; loaded: string[] };
  assert.is(status, 200);
  assert.equal(loaded, []);
});

const SERVING = `
const http = process.getBuiltinModule('node:http');
const { start } = await import('./src/server/server.ts');
const mock = await start({ port: 0, host: '127.0.0.1' });
const send = (path, body) => new Promise((resolve, reject) => {
  const headers = { authorization: 'Bearer sk-mock-default', 'content-type': 'application/json' };
  const req = http.request(mock.url + path, { method: 'POST', headers }, (res) => res.resume().on('end', () => resolve(res.statusCode)));
  req.on('error', reject).end(JSON.stringify(body));
});
const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const statuses = [
  await send('/v1/text-provider/chat/completions', chat),
  await send('/v1/text-provider/chat/completions', { ...chat, stream: true }),
  await send('/v1/text-provider/images/generations', { model: 'dall-e-3', prompt: 'a fox' }),
];
await mock.close();
console.log(JSON.stringify({ statuses, loaded: process.moduleLoadList.filter((m) => /undici/.test(m)) }));
`;

test('serving a chat completion, a stream and an image loads no fetch client', () => {
  const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SERVING], {
    encoding: 'utf8',
    cwd: process.cwd(),
    timeout: 60_000,
  });
  assert.is(out.status, 0, out.stderr);
  const { statuses, loaded } = JSON.parse(out.stdout.trim().split('\n').pop()!) as {
    statuses: number[];
    loaded: string[];
  };
  assert.equal(statuses, [200, 200, 200]);
  assert.equal(loaded, []);
});

test.run();
