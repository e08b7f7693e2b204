// Slow and idle clients are closed by the configured timeouts, with a 408 in the envelope where an
// answer can still be given; the server keeps answering everyone else.
import { connect, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KEY, useMock } from '../support/index.js';
import { assertHealthy, CHAT_BODY, chatHead, exchange, responses } from './raw.js';

const mock = useMock(test, { timeouts: { headersMs: 300, requestMs: 600, keepAliveMs: 200 } });

const closed = (s: Socket) =>
  new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())));

test('slowloris: headers sent a byte at a time are cut off by the header timeout with a 408', async () => {
  const head = `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n${'X-Pad: aaaaaaaa\r\n'.repeat(40)}\r\n`;
  const ex = await exchange(mock().port, '', { trickle: { pieces: [...head], gapMs: 20 } });
  assert.ok(ex.sent < Buffer.byteLength(head), 'closed before the headers were complete');
  const [res] = responses(ex.text);
  assert.equal([res?.status, res?.json?.error?.code], [408, 'request_timeout'], ex.text);
  await assertHealthy(mock());
});

test('a slow body is cut off by the request timeout with a 408', async () => {
  const pieces = [...CHAT_BODY];
  const ex = await exchange(mock().port, chatHead(`Content-Length: ${CHAT_BODY.length}\r\n`), {
    trickle: { pieces, gapMs: 30 },
  });
  assert.ok(
    ex.sent < Buffer.byteLength(chatHead(`Content-Length: ${CHAT_BODY.length}\r\n`)) + CHAT_BODY.length,
    'closed before the body was complete',
  );
  const [res] = responses(ex.text);
  assert.equal([res?.status, res?.json?.error?.code], [408, 'request_timeout'], ex.text);
  await assertHealthy(mock());
});

test('a body that never ends (Content-Length promises more) gets a 408, not a hang', async () => {
  const ex = await exchange(mock().port, chatHead(`Content-Length: ${CHAT_BODY.length + 100}\r\n`) + CHAT_BODY);
  const [res] = responses(ex.text);
  assert.equal([res?.status, res?.json?.error?.code], [408, 'request_timeout'], ex.text);
});

test('hundreds of idle connections: silent ones and idle keep-alive ones are all closed; others are still served', async () => {
  const port = mock().port;
  const open = (send?: string) =>
    new Promise<Socket>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        if (send) s.write(send);
        resolve(s);
      });
      s.on('error', () => {});
      s.on('data', () => {});
    });
  const request = `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`;
  const sockets = await Promise.all(Array.from({ length: 300 }, (_, i) => open(i % 2 ? request : undefined)));
  await assertHealthy(mock());
  await Promise.all(sockets.map(closed));
  assert.is(mock().server.listening, true);
  await new Promise<void>((resolve) =>
    mock().server.getConnections((_, n) => (assert.ok(n <= 1, `${n} connections left`), resolve())),
  );
  await assertHealthy(mock());
});

test.run();
