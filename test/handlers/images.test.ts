import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import {
  assertError,
  assertSchema,
  get,
  KEY,
  pathOf,
  pngSize,
  post,
  useMock,
  VALID,
  withMock,
} from '../support/index.js';

const mock = useMock(test);
const PATH = pathOf('images.generate');
const limits = JSON.parse(readFileSync(new URL('../../fixtures/limits.json', import.meta.url), 'utf8')) as {
  images: { defaultSize: string };
};

test('an images response with a URL and the revised prompt, matching its schema', async () => {
  const { url } = mock();
  const res = await post(url, PATH, VALID['images.generate']);
  assert.is(res.status, 200);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assertSchema('images-response.json', res.json);
  assert.is(res.json.created, 1767225600);
  assert.is(res.json.data.length, 1);
  const [item] = res.json.data;
  assert.ok(item.url.startsWith(`${url}/media/images/${limits.images.defaultSize}/`), item.url);
  assert.match(item.revised_prompt, /^a lighthouse at dusk/);
  assert.is(item.b64_json, undefined);
});

test('each URL serves a real PNG of the requested size, without a key', async () => {
  const { url } = mock();
  for (const size of ['1024x1024', '1792x1024', '1024x1792']) {
    const res = await post(url, PATH, { ...VALID['images.generate'], size });
    const link = new URL(res.json.data[0].url);
    assert.ok(link.pathname.includes(`/${size}/`));
    const png = await get(url, link.pathname, null);
    assert.is(png.status, 200);
    assert.is(png.headers['content-type'], 'image/png');
    const [w, h] = size.split('x').map(Number);
    assert.equal(pngSize(png.bytes), { width: w, height: h }, size);
  }
});

test('response_format b64_json returns the PNG inline', async () => {
  const { url } = mock();
  const res = await post(url, PATH, { ...VALID['images.generate'], size: '1024x1792', response_format: 'b64_json' });
  assert.is(res.status, 200);
  assertSchema('images-response.json', res.json);
  const [item] = res.json.data;
  assert.is(item.url, undefined);
  assert.equal(pngSize(Buffer.from(item.b64_json, 'base64')), { width: 1024, height: 1792 });
});

test("the answer format is the model's: gpt-image-1 answers b64_json, as the real service; the others a URL", async () => {
  const { url } = mock();
  const gpt = await post(url, PATH, { model: 'gpt-image-1', prompt: 'a red square', size: '1792x1024', n: 2 });
  assert.is(gpt.status, 200, gpt.text.slice(0, 300));
  assertSchema('images-response.json', gpt.json);
  assert.is(gpt.json.data.length, 2);
  for (const item of gpt.json.data) {
    assert.is(item.url, undefined);
    assert.equal(pngSize(Buffer.from(item.b64_json, 'base64')), { width: 1792, height: 1024 });
  }
  for (const model of ['dall-e-3', 'stable-diffusion-3.5-large']) {
    const res = await post(url, PATH, { model, prompt: 'a red square' });
    assert.ok(res.json.data[0].url, model);
    assert.is(res.json.data[0].b64_json, undefined, model);
  }
});

test('gpt-image-1 refuses response_format whatever its value, as the real service: 400 unknown_parameter', async () => {
  const { url } = mock();
  for (const format of ['url', 'b64_json']) {
    const res = await post(url, PATH, { model: 'gpt-image-1', prompt: 'a red square', response_format: format });
    assertError(res, 400, 'response_format');
    assert.is(res.json.error.code, 'unknown_parameter');
    assert.match(
      res.json.error.message,
      /Unknown parameter: 'response_format'\. Model 'gpt-image-1' always returns b64_json/,
    );
  }
});

test('the openai SDK reads data[0].b64_json of gpt-image-1 without asking for it', async () => {
  const client = new OpenAI({ apiKey: KEY, baseURL: `${mock().url}/text-provider`, maxRetries: 0 });
  const res = await client.images.generate({ model: 'gpt-image-1', prompt: 'a lighthouse' });
  assert.equal(pngSize(Buffer.from(res.data![0]!.b64_json!, 'base64')), { width: 1024, height: 1024 });
});

test('dall-e-3 allows n = 1 only; other models give n distinct images', async () => {
  const { url } = mock();
  const two = await post(url, PATH, { ...VALID['images.generate'], n: 2 });
  assertError(two, 400, 'n');
  assert.match(two.json.error.message, /dall-e-3/);
  assert.match(two.json.error.message, /<= 1/);
  const one = await post(url, PATH, { ...VALID['images.generate'], n: 1 });
  assert.is(one.status, 200);
  const three = await post(url, PATH, { ...VALID['images.generate'], model: 'stable-diffusion-3.5-large', n: 3 });
  assert.is(three.status, 200);
  assertSchema('images-response.json', three.json);
  const urls = three.json.data.map((d: { url: string }) => d.url);
  assert.is(new Set(urls).size, 3);
  const five = await post(url, PATH, { ...VALID['images.generate'], model: 'stable-diffusion-3.5-large', n: 5 });
  assertError(five, 400, 'n');
});

test('the revised prompt states the style, quality and size, with the defaults when not given', async () => {
  const { url } = mock();
  const plain = await post(url, PATH, { ...VALID['images.generate'], prompt: '  a red fox  ' });
  assert.is(plain.json.data[0].revised_prompt, 'a red fox (vivid style, standard quality, 1024x1024)');
  const chosen = await post(url, PATH, {
    ...VALID['images.generate'],
    style: 'natural',
    quality: 'hd',
    size: '1792x1024',
  });
  assert.match(chosen.json.data[0].revised_prompt, /\(natural style, hd quality, 1792x1024\)$/);
});

test('an unknown model or a model of another kind is a 400 that lists the image models', async () => {
  const { url } = mock();
  for (const model of ['dall-e-9', 'gpt-4o']) {
    const res = await post(url, PATH, { ...VALID['images.generate'], model });
    assertError(res, 400, 'model');
    assert.is(res.json.error.code, model === 'gpt-4o' ? 'model_not_supported' : 'model_not_found');
    for (const m of ['dall-e-3', 'gpt-image-1', 'stable-diffusion-3.5-large'])
      assert.ok(res.json.error.message.includes(m), `${model}: ${m}`);
  }
});

test('publicUrl sets the base of media links', async () => {
  await withMock({ publicUrl: 'https://mock.example.test/' }, async ({ url }) => {
    const res = await post(url, PATH, VALID['images.generate']);
    assert.match(res.json.data[0].url, /^https:\/\/mock\.example\.test\/media\/images\/1024x1024\/\d+\.png$/);
  });
});

test('a hostile Host header is not used in links', async () => {
  const { url } = mock();
  const res = await post(url, PATH, VALID['images.generate'], undefined, { host: 'evil.test/"><script>' });
  assert.is(res.status, 200);
  assert.not.match(res.json.data[0].url, /evil|script/);
  assert.ok(res.json.data[0].url.startsWith(`${url}/media/images/`), res.json.data[0].url);
});

test.run();
