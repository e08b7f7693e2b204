// images.generate with the official openai package, and the PNG behind the URL it returns.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { assertSchema, KEY, pngSize, useMock } from '../support/index.js';

const mock = useMock(test);
const client = () => new OpenAI({ apiKey: KEY, baseURL: `${mock().url}/text-provider`, maxRetries: 0 });

test('images.generate returns a URL that serves a real PNG of the requested size', async () => {
  for (const size of ['1024x1024', '1792x1024', '1024x1792'] as const) {
    const res = await client().images.generate({ model: 'dall-e-3', prompt: 'a lighthouse at dusk', size });
    assertSchema('images-response.json', res);
    assert.is(res.data!.length, 1);
    const { url, revised_prompt } = res.data![0]!;
    assert.ok(revised_prompt?.includes('a lighthouse at dusk'));
    const png = await fetch(url!);
    assert.is(png.status, 200);
    assert.is(png.headers.get('content-type'), 'image/png');
    const [width, height] = size.split('x').map(Number);
    assert.equal(pngSize(Buffer.from(await png.arrayBuffer())), { width, height });
  }
});

test('images.generate with b64_json carries the PNG inline', async () => {
  const res = await client().images.generate({
    model: 'dall-e-3',
    prompt: 'a red square',
    size: '1024x1024',
    response_format: 'b64_json',
  });
  assert.equal(pngSize(Buffer.from(res.data![0]!.b64_json!, 'base64')), { width: 1024, height: 1024 });
});

test('n above the model maximum is a BadRequestError naming n', async () => {
  try {
    await client().images.generate({ model: 'dall-e-3', prompt: 'two cats', n: 2 });
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.instance(err, OpenAI.BadRequestError);
    assert.is((err as InstanceType<typeof OpenAI.BadRequestError>).param, 'n');
  }
});

test.run();
