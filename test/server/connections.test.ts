import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConnectionTracker } from '../../src/server/connections.js';
import { start } from '../../src/server/server.js';
import { manualTimers, waitFor } from '../support/index.js';

/** POSTs a small body with a wrong key over the given agent; resolves with the status. */
function rejected(url: string, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/text-provider/chat/completions`,
      { method: 'POST', agent, headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
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

test('a body still unsent after the linger time: the connection is closed; one that arrives in time keeps it open', async () => {
  // The linger time runs on a clock the test moves: ten seconds of it pass in a few milliseconds, so Node's own idle
  // timeout (the same ten seconds, on the process's clock) never comes near; the request timeout is ten minutes.
  const clock = manualTimers();
  const mock = await start(
    { port: 0, logLevel: 'silent', timeouts: { keepAliveMs: 10_000, requestMs: 600_000 } },
    { streamTimers: clock },
  );
  const head = (length: number) =>
    `POST /text-provider/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
  // The server's end of each connection, to see a byte arrive there.
  const ends: Socket[] = [];
  mock.server.on('connection', (s: Socket) => ends.push(s));
  try {
    const slow = connect(mock.port, '127.0.0.1');
    let answer = '';
    slow.on('data', (d: Buffer) => (answer += d.toString()));
    slow.on('error', () => {}); // the server cuts it while bytes are still coming: a reset is expected
    let closed = false;
    slow.once('close', () => (closed = true));
    slow.write(`${head(100_000)}{"model":`);
    await waitFor('the 401, answered before the body', () => /^HTTP\/1\.1 401 /.test(answer), { on: [slow, 'data'] });
    // A byte a second: never idle, far too slow to finish. Open until the linger time is over, closed once it is.
    for (let second = 1; second <= 12 && !closed; second++) {
      const read = ends[0]!.bytesRead;
      slow.write(' ');
      await waitFor('the byte at the server', () => ends[0]!.bytesRead > read || closed);
      clock.advance(1000);
      if (second < 10) assert.not.ok(closed || ends[0]!.destroyed, `closed after ${second} s of 10`);
    }
    await waitFor('the server to close the trickling connection', () => closed, { on: [slow, 'close'] });
    assert.ok(clock.now() <= 11_000, `closed ${clock.now()} ms after the answer`);

    const inTime = connect(mock.port, '127.0.0.1');
    let answers = '';
    inTime.on('data', (d: Buffer) => (answers += d.toString()));
    inTime.write(`${head(2)}{`);
    await waitFor('the 401', () => /HTTP\/1\.1 401 /.test(answers), { on: [inTime, 'data'] });
    clock.advance(5000);
    inTime.write('}'); // the body ends within the linger time: the connection serves the next request
    inTime.write(`${head(2)}{}`);
    while ((answers.match(/HTTP\/1\.1 401 /g) ?? []).length < 2) await once(inTime, 'data');
    clock.advance(20_000); // the linger time is long over: nothing is left to close the connection for
    await new Promise((resolve) => setImmediate(resolve));
    assert.not.ok(inTime.destroyed);
    inTime.destroy();
  } finally {
    await mock.close();
  }
});

test('an answer the client leaves unread past the send time has its connection closed; one it reads is not cut', async () => {
  // A plain http server with the tracker, answering 16 MB: more than the kernel holds for a client that reads nothing.
  const clock = manualTimers();
  const big = Buffer.alloc(16 * 1024 * 1024, 'a');
  const server = createServer((_req, res) => res.end(big));
  new ConnectionTracker(server, 10_000, { maxReasonChars: 80 }, () => {}, clock, 5000);
  const ends: Socket[] = [];
  server.on('connection', (s: Socket) => ends.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    const ask = (socket: Socket) => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const never = connect(port, '127.0.0.1');
    never.pause(); // reads nothing
    never.on('error', () => {});
    ask(never);
    await waitFor('the answer waiting at the server', () => (ends[0]?.writableLength ?? 0) > 0);
    clock.advance(4000);
    assert.not.ok(ends[0]!.destroyed, 'not cut before the send time');
    clock.advance(2000);
    await waitFor('the unread connection closed', () => ends[0]!.destroyed);

    const reader = connect(port, '127.0.0.1');
    let got = 0;
    reader.on('data', (d: Buffer) => (got += d.length));
    ask(reader);
    await waitFor('the whole answer read', () => got > big.length, { on: [reader, 'data'] });
    await waitFor('the server to see it all taken', () => ends[1]!.writableLength === 0);
    clock.advance(20_000);
    await new Promise((resolve) => setImmediate(resolve));
    assert.not.ok(ends[1]!.destroyed, 'a connection whose answer was read stays open');
    reader.destroy();
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test.run();
