import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApp } from '../../src/app/createApp.js';
import { ConfigError } from '../../src/domain/config.js';
import { operation, operations, pathsOf } from '../../src/contract/operations.js';
import {
  assertError,
  assertSchema,
  get,
  pathOf,
  post,
  request,
  useMock,
  VALID,
  withMock,
  type Res,
  heldEntries,
} from '../support/index.js';

const mock = useMock(test);
const documented = operations.filter((o) => o.documented);
const PUBLIC_URL = 'https://mock.example.test';

/** Sends the valid request of an operation (GET operations have no body). */
const call = (url: string, id: string, path = operation(id).path): Promise<Res> =>
  operation(id).method === 'POST' ? post(url, path, VALID[id]) : get(url, path);

/** Checks a success against what the operations table promises: its schema or its media type. */
function assertSuccess(id: string, res: Res): void {
  const op = operation(id);
  assert.is(res.status, 200, `${id}: ${res.text.slice(0, 200)}`);
  assert.ok(
    String(res.headers['content-type']).startsWith(op.success.contentType),
    `${id}: ${res.headers['content-type']}`,
  );
  if (op.success.schema) assertSchema(op.success.schema, res.json);
  else assert.ok(res.bytes.length > 0);
}

test('the operations table: seven documented operations on the paths of the API document', () => {
  assert.equal(
    documented.map((o) => `${o.method} ${o.path}`),
    [
      'POST /text-provider/chat/completions',
      'POST /text-provider/images/generations',
      'POST /image-provider/image-edit',
      'POST /video-provider/generate',
      'POST /voice-provider/tts',
      'POST /cloud-provider/speech',
      'GET /v1/me',
    ],
  );
  assert.equal(pathsOf(operation('chat.completions')), [
    '/text-provider/chat/completions',
    '/v1/text-provider/chat/completions',
  ]);
  assert.equal(pathsOf(operation('models.list')), ['/v1/models', '/text-provider/models', '/v1/text-provider/models']);
  assert.throws(() => operation('nope'), /unknown operation nope/);
});

test('each documented operation answers 200 with its documented body, as written and under /v1', async () => {
  const { url } = mock();
  for (const op of documented) {
    for (const path of pathsOf(op)) assertSuccess(op.id, await call(url, op.id, path));
  }
});

test('the extensions answer with their schemas too', async () => {
  const { url } = mock();
  assertSuccess('models.list', await get(url, '/v1/models'));
  const task = await post(url, pathOf('video.generate'), VALID['video.generate']);
  assertSuccess('video.get', await get(url, `/video-provider/generate/${task.json.id}`));
  assertSuccess('media.image', await get(url, '/media/images/1024x1024/1.png', null));
  assertSuccess('media.video', await get(url, '/media/videos/768x768/4/1.mp4', null));
});

/** The Limits table of the API document: the field, a value just inside, and one just outside. */
const LIMITS: [string, string, string, unknown, unknown][] = [
  ['prompt length', 'images.generate', 'prompt', 'p'.repeat(1000), 'p'.repeat(1001)],
  ['text length', 'voice.tts', 'text', 't'.repeat(2500), 't'.repeat(2501)],
  ['n for dall-e-3', 'images.generate', 'n', 1, 2],
  ['temperature max', 'chat.completions', 'temperature', 2, 2.01],
  ['temperature min', 'chat.completions', 'temperature', 0, -0.01],
  ['top_p max', 'chat.completions', 'top_p', 1, 1.01],
  ['top_p min', 'chat.completions', 'top_p', 0, -0.01],
  ['rate max', 'cloud.speech', 'rate', 50, 50.01],
  ['rate min', 'cloud.speech', 'rate', -50, -50.01],
  ['pitch max', 'cloud.speech', 'pitch', 50, 50.01],
  ['pitch min', 'cloud.speech', 'pitch', -50, -50.01],
  ['duration 4', 'video.generate', 'duration', 4, 3],
  ['duration 8', 'video.generate', 'duration', 8, 9],
  ['duration 16', 'video.generate', 'duration', 16, 17],
];

test('the Limits table: just inside each limit is a 200, just outside is a 400 naming the field', async () => {
  const { url } = mock();
  for (const [name, id, field, inside, outside] of LIMITS) {
    const ok = await post(url, pathOf(id), { ...VALID[id], [field]: inside });
    assertSuccess(id, ok);
    const bad = await post(url, pathOf(id), { ...VALID[id], [field]: outside });
    assertError(bad, 400, field);
    assert.is(bad.json.error.type, 'invalid_request_error', name);
    assert.ok(bad.json.error.message.includes(`'${field}'`), `${name}: ${bad.json.error.message}`);
  }
});

test('identical requests give identical bodies: JSON byte for byte, media byte for byte', async () => {
  const { url } = mock();
  for (const op of documented.filter((o) => o.id !== 'me')) {
    const a = await call(url, op.id);
    const b = await call(url, op.id);
    assert.is(a.status, 200, op.id);
    assert.ok(a.bytes.equals(b.bytes), op.id);
  }
  // GET /v1/me reports usage, which each request moves on; all else stays the same.
  const me1 = (await call(url, 'me')).json;
  const me2 = (await call(url, 'me')).json;
  assert.is(me2.usage.requests, me1.usage.requests + 1);
  assert.equal({ ...me1, usage: null }, { ...me2, usage: null });
  const task = await post(url, pathOf('video.generate'), VALID['video.generate']);
  const v1 = await get(url, new URL(task.json.video.url).pathname, null);
  const v2 = await get(url, new URL(task.json.video.url).pathname, null);
  assert.ok(v1.bytes.equals(v2.bytes));
  const different = await post(url, pathOf('chat.completions'), { ...VALID['chat.completions'], temperature: 1 });
  assert.is.not(different.json.id, (await call(url, 'chat.completions')).json.id);
});

test('two servers with the same configuration give the same bodies', async () => {
  const collect = (url: string) => Promise.all(documented.filter((o) => o.id !== 'me').map((o) => call(url, o.id)));
  const first = await withMock({ publicUrl: PUBLIC_URL }, async ({ url }) => collect(url));
  const second = await withMock({ publicUrl: PUBLIC_URL }, async ({ url }) => collect(url));
  for (const [i, res] of first.entries()) {
    assert.is(res.status, 200);
    assert.ok(res.bytes.equals(second[i]!.bytes), `${res.headers['content-type']}: ${res.text.slice(0, 120)}`);
  }
});

test('clock: a fixed time by choice, or the wall clock', async () => {
  await withMock({ clock: 1000 }, async ({ url }) => {
    assert.is((await call(url, 'images.generate')).json.created, 1000);
  });
  await withMock({ clock: 'system' }, async ({ url }) => {
    const created = (await call(url, 'images.generate')).json.created as number;
    assert.ok(Math.abs(created - Date.now() / 1000) < 3600, String(created));
  });
});

test('createApp rejects an invalid configuration with a message naming the field', () => {
  assert.throws(
    () => createApp({ port: -1 }),
    (e: Error) => e instanceof ConfigError && /port/.test(e.message),
  );
});

test('wrong methods on documented paths are 405 and unknown paths 404, under /v1 too', async () => {
  const { url } = mock();
  assertError(await request(url, '/v1/voice-provider/tts', { method: 'GET' }), 405, null);
  assertError(await request(url, '/v1/voice-provider/ttx', { method: 'POST', body: {} }), 404, null);
});

test('the steps run in their declared order: the route, then the key, then the body, each refusal ending the request', async () => {
  const { url, services } = mock();
  const before = heldEntries(services).length;
  const chat = operation('chat.completions').path;
  // No key on an unknown path: the route refuses first (a 404, not a 401).
  assertError(await request(url, '/v1/nowhere', { method: 'POST', body: {}, key: null }), 404, null);
  // No key and a body over the limit: the key is refused before the body is read.
  const large = { raw: 'x'.repeat(services.config.bodyLimit + 1), key: null, method: 'POST' };
  assertError(await request(url, chat, large), 401, null);
  // A wrong key and a body the schema refuses: a 401 (validation never ran).
  assertError(await request(url, chat, { body: { model: 1 }, key: 'sk-wrong' }), 401, null);
  // A good key and the same body: now validation speaks.
  assertError(await request(url, chat, { body: { model: 1 } }), 400, 'messages');
  // Each went through the one path and was recorded once, with the operation its route found.
  assert.equal(
    heldEntries(services)
      .slice(before)
      .map((r) => [r.status, r.operation ?? null]),
    [
      [404, null],
      [401, 'chat.completions'],
      [401, 'chat.completions'],
      [400, 'chat.completions'],
    ],
  );
});

test.run();
