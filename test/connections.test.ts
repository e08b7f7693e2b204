import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { start } from '../src/server.js';

/** POSTs a small body with a wrong key over the given agent; resolves with the status. */
function rejected(url: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/text-provider/chat/completions`, { method: 'POST', agent, headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }));
  });
}

test('early answers on one keep-alive connection leave no listener behind on its socket', async () => {
  const mock = await start({ port: 0, logLevel: 'silent' });
  const sockets: Socket[] = [];
  mock.server.on('connection', (s: Socket) => sockets.push(s));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < 30; i++) assert.is(await rejected(mock.url, agent), 401);
    assert.is(sockets.length, 1, 'the requests shared one connection');
    // A 401 answers before the body is read, so each request's body is discarded; a listener left per
    // request would pile up here (30 requests) and trip Node's MaxListenersExceeded warning.
    assert.ok(sockets[0]!.listenerCount('close') < 10, `${sockets[0]!.listenerCount('close')} close listeners`);
  } finally {
    agent.destroy();
    await mock.close();
  }
});

test.run();
