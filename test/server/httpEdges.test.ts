// Requests at the edges of HTTP/1.1, on a raw socket: Expect, a missing Host, transfer codings other than chunked, and
// requests Node's parser or timers end after their head (a body that stops, a bad chunk). Each gets an answer in the
// envelope that echoes its request id, and one journal entry with the status it was sent.
import { connect } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { start, type RunningMock } from '../../src/server/server.js';
import { KEY, waitFor } from '../support/index.js';

const CHAT = '/v1/text-provider/chat/completions';
const BODY = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

/** One step of a raw client: bytes to send, a pause, or its write side closed. */
type Part = string | { readonly wait: number } | { readonly end: true };

/** Sends `parts` on a new connection and resolves with every byte the server sent, once it closes the connection. */
function exchange(port: number, parts: readonly Part[]): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve(got));
    socket.on('connect', async () => {
      for (const part of parts) {
        if (typeof part === 'string') socket.write(part);
        else if ('wait' in part) await new Promise((r) => setTimeout(r, part.wait));
        else socket.end();
      }
    });
  });
}

/** A request head on the chat route, with these headers after the usual ones. */
const head = (headers: Record<string, string | number>, { host = true } = {}) =>
  `POST ${CHAT} HTTP/1.1\r\n${host ? 'Host: x\r\n' : ''}Authorization: Bearer ${KEY}\r\nContent-Type: application/json\r\n` +
  Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('') +
  '\r\n';

interface Entry {
  readonly requestId: string;
  readonly status: number;
  readonly errorCode?: string;
}

const entries = async (mock: RunningMock): Promise<Entry[]> =>
  ((await (await fetch(`${mock.url}/__admin/requests`)).json()) as { data: Entry[] }).data;

/** The journal's entries for `id`, once there is one. */
async function recorded(mock: RunningMock, id: string): Promise<Entry[]> {
  let mine: Entry[] = [];
  await waitFor(
    `a journal entry for ${id}`,
    async () => (mine = (await entries(mock)).filter((e) => e.requestId === id)).length > 0,
  );
  return mine;
}

/** The status line, the x-request-id and the error code of the last answer in `bytes`. */
function lastAnswer(bytes: string): { status: number; id: string | undefined; code: string | undefined } {
  // A status line starts the bytes or follows the end of a head or a JSON body (a message may quote "HTTP/1.1").
  const starts = [...bytes.matchAll(/(?:^|\r\n\r\n|\})(?=HTTP\/1\.1 \d{3} )/g)];
  const text = bytes.slice(
    starts.length ? starts[starts.length - 1]!.index! + starts[starts.length - 1]![0].length : 0,
  );
  return {
    status: Number(text.slice(9, 12)),
    id: /\r\nx-request-id: ([^\r]*)\r\n/i.exec(text)?.[1],
    code: /"code":"([^"]*)"/.exec(text)?.[1],
  };
}

let mock: RunningMock;
test.before(async () => {
  mock = await start({ port: 0, logLevel: 'silent', timeouts: { requestMs: 400, keepAliveMs: 200 } });
});
test.after(() => mock.close());

test('Expect: 100-continue with a Content-Length over the limit is refused before the client is told to send', async () => {
  const bytes = await exchange(mock.port, [
    head({ 'Content-Length': 9 * 1024 * 1024, Expect: '100-continue', 'X-Request-Id': 'exp-413' }),
  ]);
  assert.not.match(bytes, /100 Continue/);
  assert.equal(lastAnswer(bytes), { status: 413, id: 'exp-413', code: 'request_too_large' });
  assert.equal(
    (await recorded(mock, 'exp-413')).map((e) => e.status),
    [413],
  );
});

test('Expect: 100-continue without a key is refused with a 401, and no 100 Continue', async () => {
  const bytes = await exchange(mock.port, [
    `POST ${CHAT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\nExpect: 100-continue\r\nX-Request-Id: exp-401\r\n\r\n`,
  ]);
  assert.not.match(bytes, /100 Continue/);
  assert.is(lastAnswer(bytes).status, 401);
});

test('Expect: 100-continue on a request the mock will read: 100 Continue, then the answer once the body came', async () => {
  const bytes = await exchange(mock.port, [
    head({ 'Content-Length': BODY.length, Expect: '100-Continue', 'X-Request-Id': 'exp-200', Connection: 'close' }),
    { wait: 50 },
    BODY,
  ]);
  assert.ok(bytes.startsWith('HTTP/1.1 100 Continue\r\n\r\n'), bytes.slice(0, 40));
  assert.equal(lastAnswer(bytes), { status: 200, id: 'exp-200', code: undefined });
});

test('HTTP/1.0 has no expectations: Expect is ignored, no 100 Continue, no 417', async () => {
  for (const expect of ['100-continue', 'teapot']) {
    const request = head({ 'Content-Length': BODY.length, Expect: expect }).replace(' HTTP/1.1\r\n', ' HTTP/1.0\r\n');
    const bytes = await exchange(mock.port, [request, { wait: 20 }, BODY]);
    assert.not.match(bytes, /100 Continue/);
    assert.is(lastAnswer(bytes).status, 200, expect);
  }
});

// Heads the app refuses in the envelope, each answer echoing the request id and recorded with its status.
const refused: [string, string, number, string][] = [
  [
    'an expectation other than 100-continue is a 417',
    head({ 'Content-Length': BODY.length, Expect: 'teapot', 'X-Request-Id': 'exp-417', Connection: 'close' }) + BODY,
    417,
    'expectation_failed',
  ],
  [
    'an HTTP/1.1 request without Host is a 400',
    head({ 'Content-Length': BODY.length, 'X-Request-Id': 'no-host', Connection: 'close' }, { host: false }) + BODY,
    400,
    'missing_host',
  ],
  [
    'a transfer coding other than chunked (its bytes never read as plain JSON) is a 501',
    head({ 'Transfer-Encoding': 'gzip, chunked', 'X-Request-Id': 'te-gzip', Connection: 'close' }) +
      `${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\n`,
    501,
    'unsupported_transfer_encoding',
  ],
];
for (const [name, request, status, code] of refused) {
  test(`${name} in the envelope, recorded`, async () => {
    const id = /X-Request-Id: (\S+)\r\n/.exec(request)![1]!;
    assert.equal(lastAnswer(await exchange(mock.port, [request])), { status, id, code });
    assert.equal(
      (await recorded(mock, id)).map((e) => e.status),
      [status],
    );
  });
}

// Answers written by the connection tracker, after the request's head was parsed: the journal says what was sent.
const cut: [string, readonly Part[], number, string][] = [
  [
    'a body that stops coming: 408',
    [head({ 'Content-Length': 1000, 'X-Request-Id': 'cut-408' }), '{"mod'],
    408,
    'request_timeout',
  ],
  [
    'a body whose client half-closes before its end: 400',
    [head({ 'Content-Length': 1000, 'X-Request-Id': 'cut-400' }), '{"mod', { wait: 20 }, { end: true }],
    400,
    'incomplete_request',
  ],
  [
    'a bad chunk size: 400',
    [head({ 'Transfer-Encoding': 'chunked', 'X-Request-Id': 'cut-chunk' }), 'zz\r\n{}\r\n0\r\n\r\n'],
    400,
    'malformed_request',
  ],
];
for (const [name, parts, status, code] of cut) {
  test(`${name}, echoing the request id, recorded once with that status`, async () => {
    const id = /X-Request-Id: (\S+)\r\n/.exec(parts[0] as string)![1]!;
    const bytes = await exchange(mock.port, parts);
    assert.equal(lastAnswer(bytes), { status, id, code });
    const mine = await recorded(mock, id);
    assert.equal(
      mine.map((e) => [e.status, e.errorCode]),
      [[status, code]],
    );
  });
}

test.run();
