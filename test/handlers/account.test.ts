import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { operations } from '../../src/contract/operations.js';
import { assertSchema, get, KEY, post, request, useMock, VALID, wholeResponse, withMock } from '../support/index.js';

const LIMITED = 'sk-mock-limited';
const mock = useMock(test);

test('GET /v1/me describes the calling key: masked label, name, scopes, rate limit, usage', async () => {
  const { url } = mock();
  const res = await get(url, '/v1/me');
  assert.is(res.status, 200);
  assertSchema('me.json', res.json);
  assert.is(res.json.object, 'api_key');
  assert.is(res.json.label, 'sk...lt');
  assert.is(res.json.name, 'default');
  assert.equal(res.json.scopes, ['text', 'image', 'video', 'voice', 'speech']);
  assert.is(res.json.rate_limit, null);
  assert.ok(res.json.usage.requests >= 1);
  const limited = await get(url, '/v1/me', LIMITED);
  assertSchema('me.json', limited.json);
  assert.equal(limited.json.rate_limit, { requests: 5, window_ms: 60000 });
  assert.is(limited.json.name, 'limited');
});

test("usage counts this key's requests by operation, the current one included", async () => {
  await withMock(
    { keys: [{ key: 'sk-usage-0123456789', label: 'usage', rateLimit: { requests: 100, tokensPerMinute: 100000 } }] },
    async ({ url }) => {
      const key = 'sk-usage-0123456789';
      await post(url, '/text-provider/chat/completions', VALID['chat.completions'], key);
      await post(url, '/voice-provider/tts', VALID['voice.tts'], key);
      await post(url, '/voice-provider/tts', VALID['voice.tts'], key);
      const res = await get(url, '/v1/me', key);
      assertSchema('me.json', res.json);
      assert.equal(res.json.usage, { requests: 4, by_operation: { 'chat.completions': 1, 'voice.tts': 2, me: 1 } });
      assert.equal(res.json.rate_limit, { requests: 100, window_ms: 60000, tokens_per_minute: 100000 });
      assert.is(res.json.label, 'sk-u...6789');
      assert.equal(res.json.scopes, []);
    },
  );
});

test('the key itself never appears in any response body or header, for any operation or outcome', async () => {
  const secret = 'sk-live-SECRETSECRET-0123456789';
  await withMock({ keys: [{ key: secret, label: 'prod' }] }, async ({ url }) => {
    const responses = [];
    for (const op of operations.filter((o) => o.auth === 'key')) {
      const path = op.path.replace(/:\w+/g, 'x');
      const body = op.method === 'POST' ? VALID[op.id] : undefined;
      responses.push(await request(url, path, { method: op.method, body, key: secret }));
      responses.push(await request(url, `/v1${path.replace(/^\/v1/, '')}`, { method: op.method, body, key: secret }));
      if (body)
        responses.push(
          await request(url, path, {
            method: 'POST',
            body: { ...body, model: 'nope', voice: 'xx-XX-Nope', voice_id: 'nope', text: '' },
            key: secret,
          }),
        );
    }
    responses.push(await request(url, '/v1/me', { key: `${secret}x` }));
    responses.push(await request(url, '/v1/me', { key: null, headers: { authorization: `Basic ${secret}` } }));
    responses.push(await request(url, '/nope', { key: secret }));
    assert.ok(
      responses.some((r) => r.status === 200) &&
        responses.some((r) => r.status === 400) &&
        responses.some((r) => r.status === 401),
    );
    for (const res of responses) {
      assert.not.ok(wholeResponse(res).includes(secret), `${res.status} ${res.text.slice(0, 100)}`);
      assert.not.ok(wholeResponse(res).includes('SECRETSECRET'));
    }
  });
});

test('GET /v1/models (and /text-provider/models) list the catalogue in the OpenAI shape', async () => {
  const { url } = mock();
  for (const path of ['/v1/models', '/text-provider/models', '/v1/text-provider/models']) {
    const res = await get(url, path);
    assert.is(res.status, 200, path);
    assertSchema('models-list.json', res.json);
    assert.ok(res.json.data.length >= 50);
    assert.ok(res.json.data.some((m: { id: string }) => m.id === 'dall-e-3'));
  }
  assert.is((await get(url, '/v1/models', KEY)).text, (await get(url, '/text-provider/models', KEY)).text);
});

test.run();
