// Every method on every path gets the envelope: 405 with Allow where the path is served, 404 elsewhere.
// Sent over a raw socket, since fetch refuses some of these methods (TRACE) and node:http adds its own headers.
import { METHODS } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { exchange, responses } from '../hardening/raw.js';
import OpenAI from 'openai';
import { assertError, KEY, post, useMock } from '../support/index.js';

const mock = useMock(test);

/** One request with `method` on `path`, the connection closed after it: status, Allow, body and raw text. */
async function send(method: string, path: string) {
  const { text } = await exchange(
    mock().port,
    `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEY}\r\nConnection: close\r\n\r\n`,
  );
  const [res] = responses(text);
  return {
    status: res?.status,
    code: res?.json?.error?.code,
    allow: /\r\nallow: ([^\r]*)\r\n/i.exec(text)?.[1],
    type: /\r\ncontent-type: ([^\r]*)\r\n/i.exec(text)?.[1],
    text,
  };
}

// CONNECT is a proxy tunnel: the server answers it before any routing (test/hardening/bodies.test.ts).
const UNUSUAL = METHODS.filter((m) => !['CONNECT', 'GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE'].includes(m));

test('every method Node accepts, on a served path, is a 405 envelope with Allow', async () => {
  assert.ok(
    UNUSUAL.includes('PROPFIND') && UNUSUAL.includes('TRACE') && UNUSUAL.includes('M-SEARCH'),
    'the list covers the methods clients found',
  );
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

test('the paths well-known clients call by default get a 404 that says what to call instead', async () => {
  const { url } = mock();
  // baseURL + '/responses', for each base URL a user may give: the server, /v1, the text provider, both.
  for (const path of [
    '/responses',
    '/v1/responses',
    '/text-provider/responses',
    '/v1/text-provider/responses',
    '/text-provider/responses/resp_1/input_items',
  ]) {
    const res = await post(url, path, { model: 'gpt-4o', input: 'hi' });
    assertError(res, 404, null);
    assert.is(res.json.error.code, 'not_found');
    assert.match(res.json.error.message, /Responses API/, path);
    assert.match(res.json.error.message, /POST \/text-provider\/chat\/completions/, path);
    assert.match(res.json.error.message, /openai\.chat\('gpt-4o'\)/, path);
  }
  for (const path of ['/chat/completions', '/v1/chat/completions', '/images/generations', '/v1/images/generations']) {
    const res = await post(url, path, { model: 'gpt-4o' });
    assertError(res, 404, null);
    assert.match(res.json.error.message, /base URL to <server>\/text-provider/, path);
  }
  // The openai SDK's other endpoints, from the base URL the docs give and from the server itself.
  const hinted: [path: string, says: RegExp][] = [
    ['/text-provider/audio/speech', /POST \/voice-provider\/tts .* POST \/cloud-provider\/speech/],
    ['/v1/audio/speech', /POST \/voice-provider\/tts/],
    ['/text-provider/audio/transcriptions', /no speech to text/],
    [
      '/text-provider/embeddings',
      /no embeddings: it offers chat completions \(POST \/text-provider\/chat\/completions\)/,
    ],
    ['/embeddings', /no embeddings/],
    ['/text-provider/moderations', /no moderations/],
    ['/text-provider/files', /no files or batches/],
    ['/text-provider/completions', /no legacy completions endpoint: use chat completions/],
    ['/text-provider/images/edits', /POST \/image-provider\/image-edit/],
    ['/text-provider/images/variations', /no image variations/],
  ];
  for (const [path, says] of hinted) {
    const res = await post(url, path, { model: 'gpt-4o', input: 'hi' });
    assertError(res, 404, null);
    assert.match(res.json.error.message, says, path);
  }
  // Other unknown paths keep the plain message; a path that only starts like a hinted one is not hinted.
  for (const path of ['/nope', '/text-provider/responsesx', '/v2/responses', '/text-provider/embeddingsx']) {
    const res = await post(url, path, {});
    assertError(res, 404, null);
    assert.match(res.json.error.message, /^Unknown path: POST \/[^ ]*\.$/, path);
  }
});

test('the openai SDK: audio.speech.create and embeddings.create are NotFoundErrors that say what to call', async () => {
  const client = new OpenAI({ apiKey: KEY, baseURL: `${mock().url}/text-provider`, maxRetries: 0 });
  const failed = async (call: () => Promise<unknown>): Promise<string> => {
    try {
      await call();
    } catch (err) {
      assert.instance(err, OpenAI.NotFoundError);
      return (err as Error).message;
    }
    throw new Error('should have thrown');
  };
  assert.match(
    await failed(() => client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hi' })),
    /text to speech is POST \/voice-provider\/tts/,
  );
  assert.match(await failed(() => client.embeddings.create({ model: 'x', input: 'hi' })), /no embeddings/);
});

test('the openai SDK: responses.create is a NotFoundError whose message names chat completions', async () => {
  const client = new OpenAI({ apiKey: KEY, baseURL: `${mock().url}/text-provider`, maxRetries: 0 });
  try {
    await client.responses.create({ model: 'gpt-4o', input: 'hi' });
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.instance(err, OpenAI.NotFoundError);
    assert.match((err as Error).message, /chat completions, POST \/text-provider\/chat\/completions/);
  }
});

test.run();
