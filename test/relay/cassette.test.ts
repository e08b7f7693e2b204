// Cassettes on their own: what a request's hash is made of (and what it leaves out), the file a cassette
// is written to, and reading and writing the folder: versions, bodies as text, base64 or media files.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { operation } from '../../src/contract/operations.js';
import {
  canonical,
  CASSETTE_VERSION,
  cassetteName,
  CassetteStore,
  isText,
  normalisedPath,
  normaliseRequest,
  requestHash,
  writeAtomic,
} from '../../src/relay/cassette.js';
import { rejection, tempDirs, tinyPng } from '../support/index.js';

const CHAT = operation('chat.completions');
const BODY = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] };

const tempDir = tempDirs(test, 'uam-cassette-');

test('canonical sorts the keys of every object, arrays keep their order', () => {
  assert.is(
    JSON.stringify(canonical({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })),
    '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
  );
  assert.equal(canonical([3, 1, 2]), [3, 1, 2]);
  assert.is(canonical('x'), 'x');
});

test('the path is keyed without /v1 and with its query sorted; an empty query is dropped', () => {
  assert.is(normalisedPath('/v1/models'), '/models');
  assert.is(normalisedPath('/v1models'), '/v1models', 'only a /v1 segment is dropped');
  assert.is(normalisedPath('/text-provider/chat/completions'), '/text-provider/chat/completions');
  assert.is(normalisedPath('/v1/models?b=2&a=1'), '/models?a=1&b=2');
  assert.is(normalisedPath('/v1/models?'), '/models');
});

test("a normalised request: the operation's control headers but pacing, the body without `user`, keys sorted", () => {
  const headers = {
    'x-mock-reply-rule': ' long ',
    'x-mock-pacing': 'tps=5',
    'x-other': 'dropped',
    authorization: 'Bearer sk-x',
  };
  const request = normaliseRequest(CHAT, 'post', '/text-provider/chat/completions', headers, {
    user: 'u-1',
    model: 'gpt-4o-mini',
    messages: BODY.messages,
  });
  assert.equal(request, {
    method: 'POST',
    path: '/text-provider/chat/completions',
    headers: { 'x-mock-reply-rule': 'long' },
    body: { messages: BODY.messages, model: 'gpt-4o-mini' },
  });
  assert.is(Object.keys(request.body as object).join(), 'messages,model');
  // A header given twice is one value; a request without a body has no body field.
  assert.equal(normaliseRequest(CHAT, 'GET', '/x', { 'x-mock-reply-rule': ['a', 'b'] }, undefined), {
    method: 'GET',
    path: '/x',
    headers: { 'x-mock-reply-rule': 'a, b' },
  });
});

test('the hash: 24 hex digits, the same for what does not change the answer, another for what does', () => {
  const hash = (headers: Record<string, string>, body: Record<string, unknown>) =>
    requestHash(normaliseRequest(CHAT, 'POST', '/text-provider/chat/completions', headers, body));
  const base = hash({}, BODY);
  assert.match(base, /^[0-9a-f]{24}$/);
  assert.is(hash({}, { messages: BODY.messages, model: BODY.model }), base, 'key order');
  assert.is(hash({}, { ...BODY, user: 'someone' }), base, 'the end-user id');
  assert.is(hash({ 'x-mock-pacing': 'ttft=100' }, BODY), base, 'pacing changes timing only');
  assert.is(hash({ 'x-unrelated': '1' }, BODY), base, 'a header the operation does not read');
  assert.is.not(hash({}, { ...BODY, model: 'gpt-4o' }), base);
  assert.is.not(
    hash({}, { ...BODY, stream_options: { include_usage: true } }),
    base,
    'stream_options changes the stream',
  );
  assert.is.not(hash({ 'x-mock-reply-rule': 'long' }, BODY), base);
  assert.is(cassetteName('chat.completions', base), `chat.completions.${base}.json`);
});

test('isText: JSON, +json, XML and text/* are kept as text; media and other bytes are not', () => {
  for (const type of [
    'application/json',
    'application/json; charset=utf-8',
    'application/problem+json',
    'APPLICATION/XML',
    'text/plain',
    'text/event-stream',
  ])
    assert.ok(isText(type), type);
  for (const type of [undefined, '', 'image/png', 'audio/mpeg', 'application/octet-stream', 'application/jsonx'])
    assert.not.ok(isText(type), String(type));
});

test('a cassette written is read back; a request with none reads as undefined', async () => {
  const store = new CassetteStore(join(tempDir(), 'not-yet-made'));
  assert.is(await store.read('me', 'abc'), undefined, 'a folder that does not exist holds no cassette');
  const cassette = {
    version: CASSETTE_VERSION,
    hash: 'abc',
    operation: 'me',
    request: { method: 'GET', path: '/me', headers: {} },
    upstream: 'http://u',
    recordedAt: 'now',
    response: { status: 200, headers: {}, body: { text: '{}' } },
  };
  assert.is(await store.write('me', 'abc', JSON.stringify(cassette)), 'me.abc.json');
  assert.equal(await store.read('me', 'abc'), cassette);
  assert.equal(readdirSync(store.dir), ['me.abc.json'], 'no temporary file left');
});

test('a cassette of another version is refused, naming both versions', async () => {
  const store = new CassetteStore(tempDir());
  await store.write('me', 'old', JSON.stringify({ version: CASSETTE_VERSION + 1 }));
  const err = (await rejection(store.read('me', 'old'))) as Error;
  assert.match(
    err.message,
    `cassette me.old.json has version ${CASSETTE_VERSION + 1}; this mock reads version ${CASSETTE_VERSION}`,
  );
});

test('bodies: text stays text, other bytes are base64, media goes to a file named by its hash; each reads back', async () => {
  const store = new CassetteStore(tempDir());
  const json = Buffer.from('{"a":"é"}');
  const text = await store.storeBody(json, 'application/json');
  assert.equal(text, { text: '{"a":"é"}' });
  const bytes = Buffer.from([0, 1, 2, 255]);
  assert.equal(await store.storeBody(bytes, 'application/octet-stream'), { base64: 'AAEC/w==' });
  assert.equal(await store.storeBody(bytes, undefined), { base64: 'AAEC/w==' });
  const png = tinyPng(2, 2);
  const media = await store.storeBody(png, 'image/png; charset=binary');
  assert.ok('file' in media);
  assert.match(media.file, /^media\/[0-9a-f]{32}\.png$/);
  assert.ok(readFileSync(join(store.dir, media.file)).equals(png));
  assert.equal(await store.storeBody(png, 'image/png'), media, 'the same bytes, the same file');
  assert.match(((await store.storeBody(png, 'video/x-unknown')) as { file: string }).file, /\.bin$/);
  for (const [body, want] of [
    [text, json],
    [{ base64: 'AAEC/w==' }, bytes],
    [media, png],
  ] as const)
    assert.ok((await store.bodyBytes(body)).equals(want));
});

test('a media file outside the folder is refused, never read', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'secret.txt'), 'outside');
  const store = new CassetteStore(join(dir, 'cassettes'));
  for (const file of ['../secret.txt', 'media/../../secret.txt', '/etc/passwd', 'media/a/b.png']) {
    const err = (await rejection(store.bodyBytes({ file }))) as Error;
    assert.match(err.message, 'a cassette names a media file outside its folder');
  }
});

test('writeAtomic leaves the whole file or none, and no temporary file when the rename fails', async () => {
  const dir = tempDir();
  await writeAtomic(join(dir, 'a.json'), 'one');
  await writeAtomic(join(dir, 'a.json'), 'two');
  assert.is(readFileSync(join(dir, 'a.json'), 'utf8'), 'two');
  mkdirSync(join(dir, 'taken'));
  await rejection(writeAtomic(join(dir, 'taken'), 'x'));
  assert.equal(readdirSync(dir).sort(), ['a.json', 'taken']);
  assert.ok(existsSync(join(dir, 'taken')));
});

test.run();
