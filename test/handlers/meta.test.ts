import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { DEFAULT_SERVER_URL, openApiDocument } from '../../src/tools/openapi/index.js';
import { packageLimits } from '../../src/domain/limits.js';
import { get, post, request, useMock, VALID, withMock } from '../support/index.js';

const LIMITED = 'sk-mock-limited';
const mock = useMock(test);

test('GET /__health answers 200 {"status":"ok"} without a key, and whatever key is sent', async () => {
  const { url } = mock();
  for (const key of [null, 'sk-nope', LIMITED]) {
    const res = await get(url, '/__health', key);
    assert.is(res.status, 200, String(key));
    assert.is(res.text, '{"status":"ok"}');
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.ok(res.headers['x-request-id']);
  }
  assert.is((await get(url, '/v1/__health', null)).status, 404, 'no /v1 alias for /__ paths');
});

test('health checks never count against a key: the limited key keeps its whole allowance', async () => {
  await withMock({}, async ({ url }) => {
    for (let i = 0; i < 8; i++) {
      const res = await get(url, '/__health', LIMITED);
      assert.is(res.status, 200);
      assert.is(res.headers['x-ratelimit-remaining-requests'], undefined);
    }
    const me = await get(url, '/v1/me', LIMITED);
    assert.is(me.status, 200);
    assert.is(me.headers['x-ratelimit-remaining-requests'], '4');
    assert.is(me.json.usage.requests, 1);
  });
});

test('fault headers never fail the health check or the OpenAPI document, malformed ones included', async () => {
  const { url } = mock();
  for (const headers of [
    { 'x-mock-fault': 'status=500' },
    { prefer: 'code=503' },
    { 'x-mock-fault': 'reset' },
    { 'x-mock-fault': 'explode' },
    { 'x-mock-fault': 'stream-cut=1' },
  ]) {
    const health = await get(url, '/__health', null, headers);
    assert.is(health.status, 200, JSON.stringify(headers));
    assert.is(health.text, '{"status":"ok"}');
    const doc = await get(url, '/openapi.json', null, headers);
    assert.is(doc.status, 200, JSON.stringify(headers));
    assert.is(doc.json.openapi, '3.1.0');
  }
});

test('a fault rule that matches every request leaves the health check and the document alone; a rule cannot name them', async () => {
  await withMock({ faultRules: [{ fault: { status: 503 } }] }, async ({ url }) => {
    assert.is((await get(url, '/v1/me')).status, 503, 'the rule applies to the API');
    assert.is((await get(url, '/__health', null)).status, 200);
    assert.is((await get(url, '/openapi.json', null)).status, 200);
  });
  for (const operation of ['health', 'openapi']) {
    const res = await post(mock().url, '/__admin/faults', { match: { operation }, fault: { status: 500 } }, null);
    assert.is(res.status, 400, operation);
    assert.match(res.json.error.message, new RegExp(`Unknown operation '${operation}'`));
  }
});

test('GET /openapi.json serves the generated document with this server as its server, also under /v1', async () => {
  const { url } = mock();
  const res = await get(url, '/openapi.json', null);
  assert.is(res.status, 200);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.equal(
    res.json.servers.map((s: { url: string }) => s.url),
    [url],
  );
  assert.equal({ ...res.json, servers: [] }, { ...openApiDocument(DEFAULT_SERVER_URL, packageLimits()), servers: [] });
  const v1 = await get(url, '/v1/openapi.json', null);
  assert.is(v1.text, res.text);
  const host = await request(url, '/openapi.json', { key: null, headers: { host: 'mock.example:8080' } });
  assert.equal(
    host.json.servers.map((s: { url: string }) => s.url),
    ['http://mock.example:8080'],
  );
});

test('the document describes what the mock really answers: responses validate against its component schemas', async () => {
  const { url } = mock();
  const doc = openApiDocument(DEFAULT_SERVER_URL, packageLimits());
  const ajv = new Ajv2020({ strict: false, allErrors: true, formats: { 'base64-image': true, uri: true } });
  ajv.addSchema({ ...doc, $id: 'https://openapi.test/doc.json' });
  const check = (component: string, value: unknown) => {
    const validate = ajv.getSchema(`https://openapi.test/doc.json#/components/schemas/${component}`)!;
    assert.ok(validate(value), `${component}: ${JSON.stringify(validate.errors)}`);
  };
  check('ChatCompletion', (await post(url, '/text-provider/chat/completions', VALID['chat.completions'])).json);
  check('ImagesResponse', (await post(url, '/text-provider/images/generations', VALID['images.generate'])).json);
  check('VideoTask', (await post(url, '/video-provider/generate', VALID['video.generate'])).json);
  check('Me', (await get(url, '/v1/me')).json);
  check('ModelsList', (await get(url, '/v1/models')).json);
  check(
    'Error',
    (await post(url, '/text-provider/chat/completions', { ...VALID['chat.completions'], temperature: 3 })).json,
  );
  check('Error', (await get(url, '/v1/me', 'sk-nope')).json);
  const rule = {
    id: 'openapi-check',
    match: { operation: 'me', body: { 'a.b': [1, 'x'] } },
    fault: { status: 500 },
    times: 1,
  };
  check('AdminFaultRuleRequest', rule);
  const chunk = (
    await post(url, '/text-provider/chat/completions', { ...VALID['chat.completions'], stream: true })
  ).text.split('\n\n')[0]!;
  check('ChatCompletionChunk', JSON.parse(chunk.slice('data: '.length)));
  const bad = ajv.getSchema('https://openapi.test/doc.json#/components/schemas/ChatRequest')!;
  assert.not.ok(bad({ ...VALID['chat.completions'], temperature: 2.5 }), 'limits are enforced by the document too');
});

test.run();
