import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { loadLimits } from '../../src/domain/limits.js';
import { brokenBound, nestsDeeperThan } from '../../src/pipeline/parseBody.js';

// The limits come from fixtures/limits.json, like every limit the API document leaves open.
const { maxJsonDepth: MAX_JSON_DEPTH, maxJsonValues: MAX_JSON_VALUES, maxBodyBytes } = loadLimits().requests;
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

test('__proto__, constructor and prototype as keys, however escaped and wherever, are a 400 forbidden_key', async () => {
  const { url } = mock();
  const chat = (extra: string) => `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"${extra}}]}`;
  const cases: [string, string][] = [
    ['{"model":"gpt-4o","__proto__":{"polluted":true},"messages":[]}', '__proto__'],
    ['{"model":"gpt-4o","__pro\\u0074o__":{"polluted":true},"messages":[]}', '__proto__'],
    ['{"\\u005f\\u005Fproto__":1}', '__proto__'],
    [chat(',"constructor":{"prototype":{"polluted":true}}'), 'messages[0].constructor'],
    [chat(',"x":[0,{"prot\\u006ftype":1}]'), 'messages[0].x[1].prototype'],
    [chat(',"c\\u006fnstructor":1'), 'messages[0].constructor'],
  ];
  for (const [raw, param] of cases) {
    const res = await sendRaw(url, raw);
    assertError(res, 400, param);
    assert.is(res.json.error.code, 'forbidden_key', raw);
    assert.match(res.json.error.message, /__proto__, constructor, prototype are refused as keys, however escaped/);
  }
  assert.is(({} as Record<string, unknown>).polluted, undefined);
  // As words in a text, or keys that only look like them, they are fine.
  for (const content of ['what is __proto__?', 'a constructor and a prototype', 'caf\u00e9 \u005f']) {
    const res = await sendRaw(url, chat(`,"__proto":1,"Constructor":2`).replace('"hi"', JSON.stringify(content)));
    assert.is(res.status, 200, res.text);
  }
});

test('a fault rule, its match.body and match.headers included, holds no forbidden key however escaped', async () => {
  const { url } = mock();
  for (const [match, param] of [
    ['{"body":{"__pro\\u0074o__":{"x":1}}}', 'match.body.__proto__'],
    ['{"headers":{"constructo\\u0072":"x"}}', 'match.headers.constructor'],
  ] as const) {
    const res = await request(url, '/__admin/faults', {
      method: 'POST',
      raw: `{"match":${match},"fault":{"kind":"status","status":500}}`,
    });
    assertError(res, 400, param);
    assert.is(res.json.error.code, 'forbidden_key');
  }
  const rules = await request(url, '/__admin/faults', { method: 'GET' });
  assert.equal(rules.json.data, [], 'no rule was added');
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

/** Any JSON value, its strings and keys full of quotes, escapes, brackets, commas and colons. */
const tricky = fc.string({ unit: fc.constantFrom('"', '\\', '[', ']', '{', '}', ',', ':', 'a', '\u00e9', '\n') });
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, tricky, fc.integer(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(tricky, tie('value'), { maxKeys: 4 }),
})).value;

test('nestsDeeperThan agrees with the parsed depth of any JSON text, strings full of quotes, escapes and brackets included', () => {
  fc.assert(
    fc.property(json, fc.integer({ min: 0, max: 6 }), (value, limit) => {
      const text = JSON.stringify(value);
      assert.is(nestsDeeperThan(text, limit), depthOf(value) > limit, text);
    }),
    { numRuns: 2000 },
  );
});

/** How many values a parsed JSON value holds: itself and every value inside it (an object's keys not counted). */
const valuesOf = (v: unknown): number =>
  v !== null && typeof v === 'object' ? 1 + Object.values(v).reduce((n: number, c) => n + valuesOf(c), 0) : 1;

test('brokenBound counts the values of any JSON text as JSON.parse finds them, strings and whitespace aside', () => {
  fc.assert(
    fc.property(json, fc.boolean(), (value, spaced) => {
      const text = JSON.stringify(value, null, spaced ? 1 : undefined);
      const n = valuesOf(value);
      // Infinity for the depth: only the values are in question here.
      assert.is(brokenBound(text, Infinity, n), undefined, text);
      if (n > 1) assert.is(brokenBound(text, Infinity, n - 1), text.length > n - 1 ? 'values' : undefined, text);
    }),
    { numRuns: 2000 },
  );
  assert.is(brokenBound('[{}, [], {"a": []}, [[]]]', Infinity, 7), undefined);
  assert.is(brokenBound('[{}, [], {"a": []}, [[]]]', Infinity, 6), 'values');
  assert.is(brokenBound('[[[[1]]]]', 3, Infinity), 'depth');
});

test('more than requests.maxJsonValues values is a 400 too_many_values that says the limit, before JSON.parse', async () => {
  const { url } = mock();
  // The valid body's own values, then an array and its items.
  const own = valuesOf(VALID['chat.completions']);
  const body = (values: number): string =>
    JSON.stringify({ ...VALID['chat.completions'], x: new Array(values - own - 1).fill(0) });
  assert.is(valuesOf(JSON.parse(body(MAX_JSON_VALUES))), MAX_JSON_VALUES);
  const atLimit = await sendRaw(url, body(MAX_JSON_VALUES));
  assert.is(atLimit.status, 200, atLimit.text.slice(0, 200));
  for (const raw of [body(MAX_JSON_VALUES + 1), `{"x":[${'{},'.repeat(3 * MAX_JSON_VALUES)}{}]}`]) {
    const res = await sendRaw(url, raw);
    assertError(res, 400, null);
    assert.is(res.json.error.code, 'too_many_values');
    assert.match(res.json.error.message, new RegExp(`the limit is ${MAX_JSON_VALUES} values`));
  }
  // Cut off, so JSON.parse would call it invalid JSON: the count comes first.
  assert.is((await sendRaw(url, `{"x":[${'0,'.repeat(MAX_JSON_VALUES + 1)}`)).json.error.code, 'too_many_values');
});

test('each operation has its body limit (requests.maxBodyBytes), under the configured one; the 413 names both', async () => {
  const chat = maxBodyBytes['chat.completions']!;
  assert.ok(chat < 20 * 1024 * 1024, 'a chat body needs less than the 20 MiB of an image edit');
  assert.is(maxBodyBytes['images.edit'], undefined, "image edit's body carries an image: the configured limit is its");
  const over = Buffer.from(
    JSON.stringify({ ...VALID['chat.completions'], messages: [{ role: 'user', content: 'x'.repeat(chat) }] }),
  );
  await withMock({ bodyLimit: 2 * chat }, async ({ url }) => {
    for (const chunked of [false, true]) {
      const res = await sendRaw(url, over, {}, chunked);
      assertError(res, 413, null);
      assert.is(res.json.error.code, 'request_too_large');
      assert.match(res.json.error.message, new RegExp(`the limit is ${chat} bytes for chat\\.completions`));
    }
    // An image edit of the same size is under its limit: the body is read, and refused for its image only.
    const edit = await request(url, pathOf('images.edit'), {
      method: 'POST',
      raw: JSON.stringify({ prompt: 'x'.repeat(chat), image: 'not base64!' }),
    });
    assert.is(edit.status, 400, edit.text.slice(0, 200));
    assert.is.not(edit.json.error.code, 'request_too_large');
  });
});

test.run();
