// Bad bodies and bad HTTP on a real socket: each gets an answer in the error envelope, and the
// server answers a normal request afterwards.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { useMock } from '../support/index.js';
import { assertHealthy, CHAT_BODY, chatHead, exchange, responses } from './raw.js';

const LIMIT = 64 * 1024;
const mock = useMock(test, { bodyLimit: LIMIT, timeouts: { headersMs: 2000, requestMs: 2000, keepAliveMs: 300 } });

test('a body cut short by a client that stops sending: 400 incomplete_request', async () => {
  const { text } = await exchange(mock().port, chatHead(`Content-Length: ${CHAT_BODY.length + 20}\r\n`) + CHAT_BODY, {
    end: true,
  });
  const [res] = responses(text);
  assert.equal([res?.status, res?.json?.error?.code], [400, 'incomplete_request'], text);
  await assertHealthy(mock());
});

test('Content-Length shorter than the body: 400 invalid_json, then 400 for the rest, then the connection closes', async () => {
  const { text } = await exchange(mock().port, chatHead(`Content-Length: ${CHAT_BODY.length - 5}\r\n`) + CHAT_BODY);
  assert.equal(
    responses(text).map((r) => [r.status, r.json?.error?.code]),
    [
      [400, 'invalid_json'],
      [400, 'malformed_request'],
    ],
    text,
  );
  await assertHealthy(mock());
});

test('invalid UTF-8 in the JSON: 400', async () => {
  const body = Buffer.concat([
    Buffer.from('{"model":"gpt-4o","messages":[{"role":"user","content":"'),
    Buffer.from([0xff, 0xfe, 0xc3]),
    Buffer.from('"}]}'),
  ]);
  const { text } = await exchange(
    mock().port,
    Buffer.concat([Buffer.from(chatHead(`Content-Length: ${body.length}\r\nConnection: close\r\n`)), body]),
  );
  const [res] = responses(text);
  assert.is(res?.status, 400, text);
  await assertHealthy(mock());
});

for (const encoding of ['gzip', 'br', 'deflate', 'x-unknown']) {
  test(`a compressed body (Content-Encoding: ${encoding}) is refused unread: 415`, async () => {
    const { text } = await exchange(
      mock().port,
      chatHead(`Content-Encoding: ${encoding}\r\nContent-Length: 10\r\nConnection: close\r\n`) +
        '\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03',
    );
    const [res] = responses(text);
    assert.equal([res?.status, res?.json?.error?.code], [415, 'unsupported_content_encoding'], text);
  });
}

test('a declared body over the limit: 413 before the body is read; the rest is discarded, then the connection is closed', async () => {
  const size = 4 * 1024 ** 3; // more than the client can send before the server gives up on it
  const rssBefore = process.memoryUsage().rss;
  const ex = await exchange(mock().port, chatHead(`Content-Length: ${size}\r\n`), { bodyBytes: size });
  const [res] = responses(ex.text);
  assert.equal([res?.status, res?.json?.error?.code], [413, 'request_too_large'], ex.text);
  assert.ok(ex.sentBeforeAnswer! < size, 'the answer came before the client finished sending');
  assert.ok(ex.sent < size, 'the server closed the connection instead of reading the whole body');
  assert.ok(process.memoryUsage().rss - rssBefore < 128 * 1024 * 1024, 'the body was not held in memory');
  await assertHealthy(mock());
});

test('a chunked body that grows past the limit: 413', async () => {
  const chunk = (n: number) => `${n.toString(16)}\r\n${'a'.repeat(n)}\r\n`;
  const head = chatHead('Transfer-Encoding: chunked\r\n') + chunk(16 * 1024);
  const ex = await exchange(mock().port, head, {
    trickle: { pieces: Array.from({ length: 8 }, () => chunk(16 * 1024)).concat('0\r\n\r\n'), gapMs: 0 },
  });
  const [res] = responses(ex.text);
  assert.equal([res?.status, res?.json?.error?.code], [413, 'request_too_large'], ex.text);
  await assertHealthy(mock());
});

test('headers over the size limit: 431 in the envelope', async () => {
  const { text } = await exchange(
    mock().port,
    chatHead(`X-Big: ${'a'.repeat(32 * 1024)}\r\nContent-Length: 2\r\n`) + '{}',
  );
  const [res] = responses(text);
  assert.equal([res?.status, res?.json?.error?.code], [431, 'request_header_fields_too_large'], text);
  await assertHealthy(mock());
});

for (const [name, bytes] of [
  ['not HTTP at all', 'HELLO\r\n\r\n'],
  ['a header without a colon', 'GET /v1/me HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n'],
  ['a bad chunk size', `${chatHead('Transfer-Encoding: chunked\r\n')}zz\r\n`],
  [
    'both Content-Length and Transfer-Encoding',
    `${chatHead('Content-Length: 2\r\nTransfer-Encoding: chunked\r\n')}0\r\n\r\n`,
  ],
  ['a NUL byte in a header', 'GET /v1/me HTTP/1.1\r\nHost: x\u0000y\r\n\r\n'],
] as const) {
  test(`malformed HTTP (${name}): 400 in the envelope`, async () => {
    const { text } = await exchange(mock().port, bytes);
    const [res] = responses(text);
    assert.is(res?.status, 400, text);
    assert.match(String(res?.json?.error?.code), /malformed_request|invalid_json/);
    assert.match(text, /x-content-type-options: nosniff/i);
    await assertHealthy(mock());
  });
}

test('CONNECT (a proxy tunnel request) gets a 405 in the envelope, not a silent close', async () => {
  const { text } = await exchange(mock().port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
  const [res] = responses(text);
  assert.equal([res?.status, res?.json?.error?.code], [405, 'method_not_allowed'], text);
  await assertHealthy(mock());
});

test('an unsafe x-request-id is replaced, never echoed', async () => {
  const { text } = await exchange(
    mock().port,
    `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-mock-default\r\nX-Request-Id: <script>alert(1)</script>\r\nConnection: close\r\n\r\n`,
  );
  assert.match(text, /x-request-id: req_[0-9a-f]{32}\r\n/);
  assert.not.match(text, /<script>/);
});

test.run();
