// Every method on every path gets the envelope: 405 with Allow where the path is served, 404 elsewhere.
// Sent over a raw socket, since fetch refuses some of these methods (TRACE) and node:http adds its own headers.
import { METHODS } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { exchange, responses } from '../hardening/raw.js';
import { KEY, useMock } from '../helpers.js';

const mock = useMock(test);

/** One request with `method` on `path`, the connection closed after it: status, Allow, body and raw text. */
async function send(method: string, path: string) {
  const { text } = await exchange(mock().port, `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEY}\r\nConnection: close\r\n\r\n`);
  const [res] = responses(text);
  return { status: res?.status, code: res?.json?.error?.code, allow: /\r\nallow: ([^\r]*)\r\n/i.exec(text)?.[1], type: /\r\ncontent-type: ([^\r]*)\r\n/i.exec(text)?.[1], text };
}

// CONNECT is a proxy tunnel: the server answers it before any routing (test/hardening/bodies.test.ts).
const UNUSUAL = METHODS.filter((m) => !['CONNECT', 'GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE'].includes(m));

test('every method Node accepts, on a served path, is a 405 envelope with Allow', async () => {
  assert.ok(UNUSUAL.includes('PROPFIND') && UNUSUAL.includes('TRACE') && UNUSUAL.includes('M-SEARCH'), 'the list covers the methods clients found');
  for (const [path, allow] of [
    ['/text-provider/chat/completions', /^POST$/],
    ['/v1/text-provider/chat/completions', /^POST$/],
    ['/v1/me', /\bGET\b/],
    ['/video-provider/generate/vid_x', /\bGET\b/],
  ] as const) {
    for (const method of UNUSUAL) {
      const res = await send(method, path);
      assert.is(res.status, 405, `${method} ${path}: ${res.text.slice(0, 300)}`);
      assert.is(res.code, 'method_not_allowed', `${method} ${path}`);
      assert.match(String(res.type), /^application\/json/, `${method} ${path}`);
      assert.match(String(res.allow), allow, `${method} ${path}`);
    }
  }
});

test('every method Node accepts, on a path nobody serves, is a 404 envelope', async () => {
  for (const method of [...UNUSUAL, 'GET', 'POST', 'DELETE']) {
    const res = await send(method, '/no-such-path');
    assert.is(res.status, 404, `${method}: ${res.text.slice(0, 300)}`);
    assert.is(res.code, 'not_found', method);
    assert.match(String(res.type), /^application\/json/, method);
  }
});

test('a method Node does not know never reaches the app: 400 malformed_request, in the envelope', async () => {
  for (const method of ['FOO', 'get', 'BREW']) {
    const res = await send(method, '/v1/me');
    assert.is(res.status, 400, `${method}: ${res.text.slice(0, 300)}`);
    assert.is(res.code, 'malformed_request', method);
  }
});

test.run();
