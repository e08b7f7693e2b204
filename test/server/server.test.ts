import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ERRORS } from '../../src/contract/errors.js';
import { packageLimits } from '../../src/domain/limits.js';
import { clientErrorTemplate, rawErrorResponse } from '../../src/server/connections.js';
import { start } from '../../src/server/server.js';
import { get, KEY, stallThenShutdown } from '../support/index.js';

const MESSAGES = packageLimits().messages;

const closed = (s: Socket) =>
  new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())));

/** A connection that sent a request head and part of its body; resolves once the server handles it. */
async function halfUpload(port: number): Promise<{ socket: Socket; rest: () => void; answer: Promise<string> }> {
  const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  let text = '';
  const answer = new Promise<string>((resolve) => socket.on('close', () => resolve(text)));
  await new Promise<void>((resolve) => {
    socket.on('data', (d: Buffer) => {
      text += d.toString();
      if (text === 'HTTP/1.1 100 Continue\r\n\r\n') {
        text = '';
        socket.write(body.slice(0, 5), () => resolve());
      }
    });
    socket.on('connect', () =>
      socket.write(
        `POST /v1/text-provider/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
      ),
    );
  });
  return { socket, rest: () => socket.write(body.slice(5)), answer };
}

test('shutdown: idle keep-alive connections close at once, a request in flight finishes, then it resolves', async () => {
  const mock = await start({ port: 0 });
  const idle = connect(mock.port, '127.0.0.1', () =>
    idle.write(`GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`),
  );
  await new Promise((resolve) => idle.once('data', resolve));
  const busy = await halfUpload(mock.port);
  const done = mock.shutdown(60_000);
  await closed(idle);
  assert.is(mock.server.listening, false);
  busy.rest();
  assert.match(await busy.answer, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\nConnection: close\r\n/i);
  await done;
  assert.is(mock.shutdown(), done, 'a second call returns the same promise');
});

test('shutdown: what is still open when the grace period ends is closed', async () => {
  const mock = await start({ port: 0 });
  const busy = await halfUpload(mock.port);
  await mock.shutdown(50);
  await closed(busy.socket);
});

test('shutdown: a paced stream is finished at full speed with data: [DONE]', async () => {
  const mock = await start({ port: 0 });
  const body = JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'long answer' }] });
  let stopped: Promise<void> | undefined;
  mock.server.once('request', () => (stopped = mock.shutdown(60_000)));
  const text = await new Promise<string>((resolve, reject) => {
    const req = httpRequest(
      `${mock.url}/v1/text-provider/chat/completions`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${KEY}`,
          'content-type': 'application/json',
          'x-mock-pacing': 'ttft=60000; tps=1',
        },
      },
      (res) => {
        let out = '';
        res.on('data', (d: Buffer) => (out += d.toString()));
        res.on('end', () => resolve(out));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  await stopped;
  assert.match(text, /^data: /);
  assert.match(text, /data: \[DONE\]\n\n$/);
});

test('shutdown: a stream held by a stall fault ends cleanly at once, without [DONE]', async () => {
  const mock = await start({ port: 0 });
  const ending = await stallThenShutdown(mock, '/v1/text-provider/chat/completions', KEY, {
    model: 'gpt-4o',
    stream: true,
    messages: [{ role: 'user', content: 'long answer' }],
  });
  assert.is(ending.how, 'end');
  assert.is(ending.text.split('\n\n').filter(Boolean).length, 2);
  assert.not.match(ending.text, /\[DONE\]/);
});

test('close() ends everything at once, even during a graceful shutdown', async () => {
  const mock = await start({ port: 0 });
  const busy = await halfUpload(mock.port);
  void mock.shutdown(60_000);
  await mock.close();
  await closed(busy.socket);
});

test('a header timeout longer than the request timeout is capped to it instead of failing at start-up', async () => {
  const mock = await start({ port: 0, timeouts: { headersMs: 5000, requestMs: 1000 } });
  assert.is(mock.server.headersTimeout, 1000);
  assert.is((await get(mock.url, '/v1/me')).status, 200);
  await mock.close();
});

test('HTTP-level errors map to envelope answers with the right status', () => {
  const cases: [string | undefined, number, string][] = [
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'request_timeout'],
    ['HPE_HEADER_OVERFLOW', 431, 'request_header_fields_too_large'],
    ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 413, 'request_too_large'],
    ['HPE_INVALID_EOF_STATE', 400, 'incomplete_request'],
    ['HPE_INVALID_METHOD', 400, 'malformed_request'],
    [undefined, 400, 'malformed_request'],
  ];
  for (const [code, status, errorCode] of cases) {
    const t = clientErrorTemplate(Object.assign(new Error('x'), { code, reason: 'Invalid method' }), MESSAGES);
    assert.equal([t.status, t.code], [status, errorCode], String(code));
  }
  const raw = rawErrorResponse(
    clientErrorTemplate(Object.assign(new Error('x'), { code: 'HPE_HEADER_OVERFLOW' }), MESSAGES),
  );
  const [head, body] = raw.split('\r\n\r\n') as [string, string];
  assert.match(head, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  assert.match(head, new RegExp(`\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`));
  assert.equal(JSON.parse(body).error.code, 'request_header_fields_too_large');
  assert.match(head, /\r\nx-request-id: req_[0-9a-f]{32}\r\n/, 'the id made as every answer makes it');
});

test('the answers written to a socket are rows of the one error table; a parser reason is cut at messages.maxReasonChars', () => {
  const rows = new Set<unknown>(Object.values(ERRORS));
  for (const code of [
    'ERR_HTTP_REQUEST_TIMEOUT',
    'HPE_HEADER_OVERFLOW',
    'HPE_CHUNK_EXTENSIONS_OVERFLOW',
    'CONNECT',
    'HPE_INVALID_EOF_STATE',
    'HPE_INVALID_METHOD',
  ]) {
    assert.ok(rows.has(clientErrorTemplate(Object.assign(new Error('x'), { code }), MESSAGES)), code);
  }
  const reason = 'r'.repeat(MESSAGES.maxReasonChars + 50);
  const t = clientErrorTemplate(Object.assign(new Error('x'), { code: 'HPE_INVALID_METHOD', reason }), MESSAGES);
  assert.equal({ ...t, message: '' }, { ...ERRORS.MALFORMED_REQUEST, message: '' });
  assert.is(t.message, `The request is not valid HTTP/1.1: ${'r'.repeat(MESSAGES.maxReasonChars)}.`);
  // Two answers, two ids: the counter of requestIdFor, not a constant.
  const id = (raw: string) => /x-request-id: (\S+)/.exec(raw)![1];
  assert.is.not(id(rawErrorResponse(t)), id(rawErrorResponse(t)));
});

test.run();
