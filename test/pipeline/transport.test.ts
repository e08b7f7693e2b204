// The one writer that ends an answer early (src/pipeline/transport.ts), as the mock uses it for a faulted JSON or
// binary body: a head for the whole body, some of its bytes, then a cut, or silence on the server's timers until
// stallMaxMs. Timers that never fire by themselves show what was asked for; the test fires them.
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from 'koa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { StreamTimers } from '../../src/pipeline/pacer.js';
import { HandTimers } from '../support/timers.js';
import { endOf } from '../../src/pipeline/requestEnd.js';
import { writePartial } from '../../src/pipeline/transport.js';
import type { StreamOutcome } from '../../src/pipeline/sse.js';
import { waitFor } from '../support/wait.js';

const BODY = JSON.stringify({ id: 'x', text: 'a body of some length' });

/** A server whose every answer is `BODY` ended early by `writePartial`; resolves with the client's view and the outcome. */
async function partial(
  how: 'cut' | 'stall',
  bytes: number,
  timers: StreamTimers,
  whileOpen: () => Promise<void> = async () => undefined,
): Promise<{ got: string; ended: 'end' | 'error'; length: string | undefined; outcome: StreamOutcome }> {
  let outcome: Promise<StreamOutcome> | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const ctx = { res, response: { headers: {} }, respond: true } as unknown as Context;
    outcome = writePartial(ctx, endOf({}, res), { kind: 'json', body: BODY }, bytes, how, 45_000, timers);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    let opened: Promise<void> | undefined;
    const answered = new Promise<{ got: string; ended: 'end' | 'error'; length: string | undefined }>((resolve) => {
      const req = request({ port, host: '127.0.0.1', path: '/' }, (res) => {
        let got = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (got += chunk));
        const done = (ended: 'end' | 'error') => resolve({ got, ended, length: res.headers['content-length'] });
        res.on('end', () => done('end'));
        res.on('error', () => done('error'));
        res.on('aborted', () => done('error'));
      });
      req.end();
      opened = whileOpen();
    });
    // A check made while the answer is open fails the test at once, rather than leave the client waiting.
    const [client] = await Promise.all([answered, opened!]);
    return { ...client, outcome: await outcome! };
  } finally {
    server.close();
    server.closeAllConnections();
  }
}

test('cut: the head names the whole body, some of its bytes come, then the connection is cut', async () => {
  const timers = new HandTimers();
  const r = await partial('cut', 10, timers);
  assert.equal(r, { got: BODY.slice(0, 10), ended: 'error', length: String(BODY.length), outcome: 'cut' });
  assert.is(timers.sets, 0, 'a cut waits on no timer');
});

test('stall: silence on the server timers for stallMaxMs, then the connection is cut', async () => {
  const timers = new HandTimers();
  const r = await partial('stall', 5, timers, async () => {
    await waitFor('the stall to be armed', () => timers.sets === 1);
    assert.equal(timers.requested, [45_000]);
    timers.runAll();
  });
  assert.equal(r, { got: BODY.slice(0, 5), ended: 'error', length: String(BODY.length), outcome: 'stalled' });
});

test('stall at shutdown: a body with a declared length is still cut, never ended short as if whole', async () => {
  const stop = new AbortController();
  stop.abort();
  const timers = new HandTimers(0, stop.signal);
  const r = await partial('stall', 0, timers, async () => {
    await waitFor('the stall to be armed', () => timers.sets === 1);
    timers.runAll();
  });
  assert.equal(r, { got: '', ended: 'error', length: String(BODY.length), outcome: 'stalled' });
});

test.run();
