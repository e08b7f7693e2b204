import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import { runWhileIdle } from '../../src/text/warmup.js';
import { start } from '../../src/server/server.js';

const IDLE = 20;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server stand-in: the warm-up only listens to 'request' and 'close'. */
const fakeServer = () => new EventEmitter() as unknown as Server & EventEmitter;

test('steps run one by one once the server has been idle, then the warm-up resolves', async () => {
  const ran: number[] = [];
  const server = fakeServer();
  await runWhileIdle(server, IDLE, [() => ran.push(1), () => ran.push(2), () => ran.push(3)]);
  assert.equal(ran, [1, 2, 3]);
  assert.is(server.listenerCount('request') + server.listenerCount('close'), 0, 'listeners removed');
});

test('no step runs while a request is in flight; they resume after it', async () => {
  const ran: string[] = [];
  const server = fakeServer();
  const res = new EventEmitter();
  server.emit('request', {}, res); // a request arrives before the first step
  const done = runWhileIdle(server, IDLE, [() => ran.push('a'), () => ran.push('b')]);
  server.emit('request', {}, res);
  await pause(IDLE * 4);
  assert.equal(ran, [], 'held while the request is open');
  res.emit('close');
  await done;
  assert.equal(ran, ['a', 'b']);
});

test('a failing step does not stop the others; closing the server stops the rest', async () => {
  const ran: string[] = [];
  await runWhileIdle(fakeServer(), IDLE, [
    () => {
      throw new Error('broken table');
    },
    () => ran.push('next'),
  ]);
  assert.equal(ran, ['next']);

  const server = fakeServer();
  const done = runWhileIdle(server, IDLE, [() => ran.push('never')]);
  server.emit('close');
  await done;
  await pause(IDLE * 2);
  assert.equal(ran, ['next']);
});

test('start() warms the encodings in the background and close() ends the warm-up', async () => {
  const mock = await start({ port: 0 });
  const res = await fetch(`${mock.url}/v1/me`, { headers: { authorization: 'Bearer sk-mock-default' } });
  assert.is(res.status, 200);
  await mock.close();
});

test.run();
