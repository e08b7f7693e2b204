import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { loadLimits } from '../../src/domain/limits.js';
import { nestsDeeperThan } from '../../src/pipeline/parseBody.js';

// The limit comes from fixtures/limits.json, like every limit the API document leaves open.
const MAX_JSON_DEPTH = loadLimits().requests.maxJsonDepth;
import { assertError, KEY, pathOf, request, useMock, VALID, withMock } from '../support/index.js';

const mock = useMock(test);

const CHAT = pathOf('chat.completions');
const sendRaw = (
  url: string,
  raw: string | Buffer,
  headers: Record<string, string | undefined> = {},
  chunked = false,
) => request(url, CHAT, { method: 'POST', raw, headers, chunked });

test('malformed JSON is a 400 invalid_json that says so', async () => {
  const { url } = mock();
  for (const raw of ['{bad', '{"model": "gpt-4o",}', '{"a":1', '\u0000']) {
    const res = await sendRaw(url, raw);
    assertError(res, 400, null);
    assert.is(res.json.error.code, 'invalid_json', raw);
    assert.match(res.json.error.message, /not valid JSON/);
  }
});

test('bytes that are not UTF-8 are a 400 that says so; a UTF-8 BOM and any Unicode text are fine', async () => {
  const { url } = mock();
  const bad = Buffer.concat([
    Buffer.from('{"model":"gpt-4o","messages":[{"role":"user","content":"'),
    Buffer.from([0xff, 0xfe, 0xc3]),
    Buffer.from('"}]}'),
  ]);
  const res = await sendRaw(url, bad);
  assertError(res, 400, null);
  assert.is(res.json.error.code, 'invalid_encoding');
  assert.match(res.json.error.message, /not valid UTF-8/);
  const bom = await sendRaw(
    url,
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(VALID['chat.completions']))]),
  );
  assert.is(bom.status, 200, bom.text);
  const prompt = 'Ünïcødé 🌅 日本語';
  const images = await request(url, pathOf('images.generate'), {
    method: 'POST',
    raw: Buffer.from(JSON.stringify({ ...VALID['images.generate'], prompt })),
  });
  assert.ok(images.json.data[0].revised_prompt.startsWith(prompt));
});

test('a __proto__ key is refused as invalid JSON', async () => {
  const { url } = mock();
  const res = await sendRaw(
    url,
    '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"__proto__":{"polluted":true}}',
  );
  assertError(res, 400, null);
  assert.is(res.json.error.code, 'invalid_json');
  assert.is(({} as Record<string, unknown>).polluted, undefined);
  const inText = await sendRaw(
    url,
    JSON.stringify({ ...VALID['chat.completions'], messages: [{ role: 'user', content: 'what is __proto__?' }] }),
  );
  assert.is(inText.status, 200);
});

test('a JSON body that is not an object is a 400 invalid_body that names what was sent', async () => {
  const { url } = mock();
  const cases: [string, RegExp][] = [
    ['[1,2]', /but got an array/],
    ['"a string"', /but got a string/],
    ['42', /but got a number/],
    ['true', /but got a boolean/],
    ['null', /but got null/],
    ['\n  "x"', /but got a string/],
    ['', /an empty body/],
    ['  \n ', /an empty body/],
  ];
  for (const [raw, message] of cases) {
    const res = await sendRaw(url, raw);
    assertError(res, 400, null);
    assert.is(res.json.error.code, 'invalid_body', JSON.stringify(raw));
    assert.match(res.json.error.message, /must be a JSON object/);
    assert.match(res.json.error.message, message);
  }
});

test('a wrong or missing Content-Type is a 400 that says which type to send', async () => {
  const { url } = mock();
  const body = JSON.stringify(VALID['chat.completions']);
  const wrong = await sendRaw(url, body, { 'content-type': 'text/plain' });
  assertError(wrong, 400, null);
  assert.is(wrong.json.error.code, 'unsupported_content_type');
  assert.match(wrong.json.error.message, /Content-Type must be 'application\/json', but got 'text\/plain'/);
  const form = await sendRaw(url, 'a=1', { 'content-type': 'application/x-www-form-urlencoded' });
  assert.is(form.json.error.code, 'unsupported_content_type');
  const missing = await sendRaw(url, body, { 'content-type': undefined });
  assertError(missing, 400, null);
  assert.match(missing.json.error.message, /no Content-Type; send 'Content-Type: application\/json'/);
});

test('application/json with a charset, and +json types, are read as JSON', async () => {
  const { url } = mock();
  const body = JSON.stringify(VALID['chat.completions']);
  for (const type of [
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'application/vnd.api+json',
    'application/merge-patch+json',
  ]) {
    const res = await sendRaw(url, body, { 'content-type': type });
    assert.is(res.status, 200, `${type}: ${res.text}`);
    assert.is(res.json.object, 'chat.completion');
  }
});

test('a compressed body is a 415 that asks for plain JSON', async () => {
  const { url } = mock();
  const res = await sendRaw(url, gzipSync(JSON.stringify(VALID['chat.completions'])), { 'content-encoding': 'gzip' });
  assertError(res, 415, null);
  assert.is(res.json.error.code, 'unsupported_content_encoding');
  const identity = await sendRaw(url, JSON.stringify(VALID['chat.completions']), { 'content-encoding': 'identity' });
  assert.is(identity.status, 200);
});

test('a body over the configured limit is a 413, whether declared or streamed in chunks', async () => {
  await withMock({ bodyLimit: 2048 }, async ({ url }) => {
    const big = JSON.stringify({
      ...VALID['chat.completions'],
      messages: [{ role: 'user', content: 'x'.repeat(3000) }],
    });
    const declared = await sendRaw(url, big);
    assertError(declared, 413, null);
    assert.is(declared.json.error.code, 'request_too_large');
    assert.match(declared.json.error.message, /limit is 2048 bytes/);
    const chunked = await sendRaw(url, big, {}, true);
    assertError(chunked, 413, null);
    assert.is(chunked.json.error.code, 'request_too_large');
    const small = JSON.stringify({
      ...VALID['chat.completions'],
      messages: [{ role: 'user', content: 'x'.repeat(1800) }],
    });
    assert.is((await sendRaw(url, small)).status, 200);
    assert.is((await sendRaw(url, small, {}, true)).status, 200);
  });
});

test('operations without a body ignore whatever is sent', async () => {
  const { url } = mock();
  const res = await request(url, '/v1/me', {
    method: 'GET',
    raw: '{bad',
    key: KEY,
    headers: { 'content-type': 'text/plain' },
  });
  assert.is(res.status, 200);
});

test('nesting deeper than requests.maxJsonDepth is a 400 nesting_too_deep that says the limit, before JSON.parse', async () => {
  const { url } = mock();
  const body = (levels: number): string =>
    JSON.stringify({ ...VALID['chat.completions'], extra: 0 }).replace(
      '0}',
      `${'['.repeat(levels)}${']'.repeat(levels)}}`,
    );
  // The body object is the first level.
  const atLimit = await sendRaw(url, body(MAX_JSON_DEPTH - 1));
  assert.is(atLimit.status, 200, atLimit.text.slice(0, 200));
  for (const levels of [MAX_JSON_DEPTH, 3_000_000]) {
    const res = await sendRaw(url, body(levels));
    assertError(res, 400, null);
    assert.is(res.json.error.code, 'nesting_too_deep');
    assert.match(res.json.error.message, new RegExp(`limit is ${MAX_JSON_DEPTH} levels`));
  }
  // Unclosed, so JSON.parse would report it as invalid JSON: the depth check comes first.
  assert.is((await sendRaw(url, '{"a":' + '{"a":'.repeat(MAX_JSON_DEPTH))).json.error.code, 'nesting_too_deep');
});

test('brackets inside strings, escaped quotes included, do not count as nesting', async () => {
  const { url } = mock();
  const deepText = `\\"${'['.repeat(5000)}\\"{`;
  const res = await sendRaw(
    url,
    JSON.stringify({ ...VALID['chat.completions'], messages: [{ role: 'user', content: deepText }] }),
  );
  assert.is(res.status, 200, res.text.slice(0, 200));
});

test('nestsDeeperThan: counts objects and arrays, skips strings and escapes, ignores short texts', () => {
  assert.is(nestsDeeperThan('[[[]]]', 3), false);
  assert.is(nestsDeeperThan('[[[[]]]]', 3), true);
  assert.is(nestsDeeperThan('{"a":{"b":[{}]}}', 3), true);
  assert.is(nestsDeeperThan('[[]][[]][[]][[]]', 2), false); // siblings do not add up
  assert.is(nestsDeeperThan('["[[[[", "\\\\"]', 1), false);
  assert.is(nestsDeeperThan('["\\\\", [[[]]]]', 3), true); // an escaped backslash does not escape the closing quote
  assert.is(nestsDeeperThan('["\\"[[[[", 1]', 1), false); // an escaped quote does not close the string
  assert.is(nestsDeeperThan('[[[', 2), true);
  assert.is(nestsDeeperThan('[[', 2), false);
  assert.is(nestsDeeperThan('["\\\\\\"[[[', 1), false); // three backslashes: the quote is escaped, the string never closes
  assert.is(nestsDeeperThan('["\\\\"[[[', 2), true); // two: the string closes, the brackets count
});

/** How deeply a parsed JSON value nests objects and arrays. */
const depthOf = (v: unknown): number =>
  v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0;

test('nestsDeeperThan agrees with the parsed depth of any JSON text, strings full of quotes, escapes and brackets included', () => {
  const tricky = fc.string({ unit: fc.constantFrom('"', '\\', '[', ']', '{', '}', 'a', '\u00e9', '\n') });
  const json = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, tricky, fc.integer(), fc.constant(null), tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 4 }),
    object: fc.dictionary(tricky, tie('value'), { maxKeys: 4 }),
  })).value;
  fc.assert(
    fc.property(json, fc.integer({ min: 0, max: 6 }), (value, limit) => {
      const text = JSON.stringify(value);
      assert.is(nestsDeeperThan(text, limit), depthOf(value) > limit, text);
    }),
    { numRuns: 2000 },
  );
});

test.run();
