import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  assertError,
  assertSchema,
  pathOf,
  pngSize,
  post,
  tinyGif,
  tinyJpeg,
  tinyPng,
  tinyWebp,
  useMock,
} from '../support/index.js';

const mock = useMock(test);
const PATH = pathOf('images.edit');
const edit = (url: string, image: string, extra: Record<string, unknown> = {}) =>
  post(url, PATH, { prompt: 'add a rainbow', image, ...extra });

test('PNG, JPEG, GIF and WebP inputs give a PNG of the same width and height', async () => {
  const { url } = mock();
  const inputs: [string, Buffer, number, number][] = [
    ['png', tinyPng(7, 5), 7, 5],
    ['jpeg', tinyJpeg(33, 17), 33, 17],
    ['gif', tinyGif(20, 31), 20, 31],
    ['webp', tinyWebp(64, 9), 64, 9],
  ];
  for (const [format, bytes, width, height] of inputs) {
    const res = await edit(url, bytes.toString('base64'));
    assert.is(res.status, 200, `${format}: ${res.text.slice(0, 200)}`);
    assertSchema('image-edit-response.json', res.json);
    assert.is(res.json.finish_reason, 'SUCCESS');
    assert.equal(pngSize(Buffer.from(res.json.image, 'base64')), { width, height }, format);
  }
});

test('a data URI is accepted like plain base64', async () => {
  const { url } = mock();
  const b64 = tinyJpeg(12, 4).toString('base64');
  for (const prefix of ['data:image/jpeg;base64,', 'data:application/octet-stream;base64,']) {
    const res = await edit(url, prefix + b64);
    assert.is(res.status, 200, prefix);
    assert.equal(pngSize(Buffer.from(res.json.image, 'base64')), { width: 12, height: 4 });
  }
  // A media type that is not an image (nor generic binary), or no base64 marker: not the data-URI form of an image.
  for (const prefix of ['data:text/plain;base64,', 'data:image/jpeg,']) {
    const res = await edit(url, prefix + b64);
    assert.is(res.status, 400, prefix);
    assert.is(res.json.error.param, 'image');
  }
});

test('the seed is echoed when given and derived from the request otherwise; same seed, same image', async () => {
  const { url } = mock();
  const image = tinyPng(6, 6).toString('base64');
  const a = await edit(url, image, { seed: 42 });
  assert.is(a.json.seed, 42);
  const b = await edit(url, image, { seed: 42, prompt: 'something else' });
  assert.is(b.json.image, a.json.image);
  const c = await edit(url, image, { seed: 43 });
  assert.is.not(c.json.image, a.json.image);
  const derived = await edit(url, image);
  assert.ok(Number.isInteger(derived.json.seed) && derived.json.seed >= 0);
  assert.is((await edit(url, image)).json.seed, derived.json.seed);
});

test('base64 that is not an image is a 400 naming image', async () => {
  const { url } = mock();
  for (const bytes of [
    Buffer.from('hello, this is plain text'),
    Buffer.alloc(64),
    tinyPng(4, 4).subarray(0, 20),
    Buffer.from('GIF89a'),
  ]) {
    const res = await edit(url, bytes.toString('base64'));
    assertError(res, 400, 'image');
    assert.is(res.json.error.code, 'invalid_image');
    assert.match(res.json.error.message, /PNG, JPEG, GIF or WebP/);
  }
});

test('text that is not base64 or a data URI is a 400 naming image', async () => {
  const { url } = mock();
  for (const image of ['not base64!', 'data:image/png,abc', 'https://example.com/cat.png', '']) {
    const res = await edit(url, image);
    assertError(res, 400, 'image');
    assert.is(res.json.error.code, 'invalid_value', image);
  }
});

test('an image larger than the supported size is a 400 naming image', async () => {
  const { url } = mock();
  const res = await edit(url, tinyGif(5000, 10).toString('base64'));
  assertError(res, 400, 'image');
  assert.is(res.json.error.code, 'image_too_large');
  assert.match(res.json.error.message, /5000x10.*4096x4096/);
  assert.is((await edit(url, tinyGif(4096, 1).toString('base64'))).status, 200);
});

test.run();
