import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadLimits } from '../../src/domain/limits.js';
import type { RequestRecord } from '../../src/pipeline/requestContext.js';
import { assertError, get, pathOf, post, rejection, request, useMock, VALID } from '../support/index.js';

const records: RequestRecord[] = [];
const mock = useMock(test, {}, { observers: [(r) => records.push(r)] });
const last = () => records[records.length - 1]!;
const { maxRequestIdChars } = loadLimits().requests;

test('every response carries a fresh x-request-id and nosniff, success or error', async () => {
  const { url } = mock();
  const responses = [
    await get(url, '/v1/me'),
    await get(url, '/v1/me', null),
    await get(url, '/nope'),
    await request(url, '/v1/me', { method: 'POST', body: {} }),
    await post(url, pathOf('chat.completions'), {}),
    await post(url, pathOf('voice.tts'), VALID['voice.tts']),
    await get(url, '/media/images/1024x1024/7.png', null),
  ];
  const ids = responses.map((r) => String(r.headers['x-request-id']));
  for (const [i, id] of ids.entries()) assert.match(id, /^req_[0-9a-f]{32}$/, `response ${i}`);
  assert.is(new Set(ids).size, ids.length);
  for (const r of responses) assert.is(r.headers['x-content-type-options'], 'nosniff');
});

test('a safe incoming x-request-id is kept, anything else is replaced', async () => {
  const { url } = mock();
  for (const safe of ['client-123.abc:9_Z', 'x'.repeat(maxRequestIdChars)]) {
    const kept = await get(url, '/v1/me', undefined, { 'x-request-id': safe });
    assert.is(kept.headers['x-request-id'], safe);
  }
  for (const bad of ['has space', 'x'.repeat(maxRequestIdChars + 1), '<script>', 'a/b']) {
    const res = await get(url, '/v1/me', undefined, { 'x-request-id': bad });
    assert.match(String(res.headers['x-request-id']), /^req_[0-9a-f]{32}$/, bad);
  }
});

test('observers see each finished request: id, operation, masked key, status, error code, details, model, retry count', async () => {
  const { url } = mock();
  records.length = 0;
  const ok = await post(url, pathOf('chat.completions'), VALID['chat.completions'], undefined, {
    'x-stainless-retry-count': '2',
  });
  let r = last();
  assert.is(r.requestId, ok.headers['x-request-id']);
  assert.is(r.method, 'POST');
  assert.is(r.path, pathOf('chat.completions'));
  assert.is(r.operation, 'chat.completions');
  assert.is(r.keyLabel, 'sk...lt');
  assert.is(r.status, 200);
  assert.is(r.errorCode, undefined);
  assert.is(r.model, 'gpt-4o-mini');
  assert.is(r.retryCount, 2);
  assert.ok(r.latencyMs >= 0);

  const bad = await post(url, pathOf('chat.completions'), { model: 'gpt-4o', messages: [], top_p: 3 });
  assertError(bad, 400);
  r = last();
  assert.is(r.status, 400);
  assert.is(r.errorCode, 'array_below_min_length');
  assert.is(r.details!.length, 2);
  assert.is(r.retryCount, undefined);

  await get(url, '/nowhere', null);
  r = last();
  assert.is(r.status, 404);
  assert.is(r.operation, undefined);
  assert.is(r.keyLabel, undefined);
  assert.is(r.errorCode, 'not_found');
  assert.is(r.model, undefined);
  assert.is(records.length, 3);
});

/** The header names of a response, lower-cased, in the order they came. */
const names = (raw: string[]): string[] => raw.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());

test('the request id comes first and no header twice: JSON answers, the early 401, errors, the router, binary bodies, streams', async () => {
  const { url } = mock();
  const chat = await post(url, pathOf('chat.completions'), VALID['chat.completions']);
  assert.equal(names(chat.rawHeaders).slice(0, 5), [
    'x-request-id',
    'x-content-type-options',
    'x-mock-reply-rule',
    'content-type',
    'content-length',
  ]);
  const answers = [
    chat,
    await get(url, '/v1/me', null),
    await post(url, pathOf('chat.completions'), {}),
    await post(url, pathOf('chat.completions'), VALID['chat.completions'], undefined, {
      'x-mock-fault': 'status=503; retry-after=1; no-retry',
    }),
    await request(url, '/v1/me', { method: 'OPTIONS' }),
    await request(url, '/v1/me', { method: 'PUT', body: {} }),
    await post(url, pathOf('voice.tts'), VALID['voice.tts']),
    await post(url, pathOf('chat.completions'), { ...VALID['chat.completions'], stream: true }),
  ];
  for (const [i, r] of answers.entries()) {
    const list = names(r.rawHeaders);
    assert.equal(list.slice(0, 2), ['x-request-id', 'x-content-type-options'], `answer ${i}: ${list.join(', ')}`);
    assert.is(new Set(list).size, list.length, `answer ${i} repeats a header: ${list.join(', ')}`);
  }
  assert.is(answers[3]!.headers['x-should-retry'], 'false');
  assert.is(answers[5]!.headers.allow, 'HEAD, GET');
});

test('a connection dropped by a fault is journalled with the headers set before the drop', async () => {
  const { url } = mock();
  assert.instance(
    await rejection(
      post(url, pathOf('chat.completions'), VALID['chat.completions'], undefined, { 'x-mock-fault': 'reset' }),
    ),
    Error,
  );
  assert.is(last().fault, 'reset [header]');
  assert.is(last().responseHeaders?.['x-content-type-options'], 'nosniff');
});

test.run();
