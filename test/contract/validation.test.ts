import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ErrorObject } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { pointerToParam, show, toDetail, toDetails } from '../../src/contract/validation.js';
import { schemaId } from '../../src/contract/schemas.js';
import { schemas } from '../support/index.js';

const errorsOf = (file: string, value: unknown): ErrorObject[] => schemas().check(schemaId(file), value);
const detailsOf = (file: string, value: unknown) => toDetails(errorsOf(file, value));

test('pointerToParam turns JSON pointers into dotted params with indexes', () => {
  assert.is(pointerToParam('/messages/0/content'), 'messages[0].content');
  assert.is(pointerToParam('/voice_settings/stability'), 'voice_settings.stability');
  assert.is(pointerToParam('', 'model'), 'model');
  assert.is(pointerToParam('/messages/2', 'role'), 'messages[2].role');
  assert.is(pointerToParam('/a~1b/c~0d'), 'a/b.c~d');
  assert.is(pointerToParam(''), null);
  // Asked again (the answers are kept), and with children that hold a pointer's special characters.
  assert.is(pointerToParam('/messages/0/content'), 'messages[0].content');
  assert.is(pointerToParam('/messages/0'), 'messages[0]');
  assert.is(pointerToParam('/messages/0', 'content'), 'messages[0].content');
  assert.is(pointerToParam('/a', 'b/c~1'), 'a.b/c~1');
  assert.is(pointerToParam('/a', '7'), 'a[7]');
  assert.is(pointerToParam('/a\u0000b'), 'a\u0000b');
  assert.is(pointerToParam('/a', 'b'), 'a.b');
  assert.is(pointerToParam('', 'model'), 'model');
  assert.is(pointerToParam(''), null);
});

test('show quotes strings and cuts long values', () => {
  assert.is(show('abc'), "'abc'");
  assert.is(show(3), '3');
  assert.is(show(undefined), 'undefined');
  assert.is(show([1, [2]]), '[1,[2]]');
  const long = show('x'.repeat(500));
  assert.is(long.length, 60);
  assert.ok(long.endsWith('...'));
});

test('show writes the JSON of short values as JSON.stringify does', () => {
  for (const v of [
    null,
    true,
    -0.5,
    'a "quoted" \n line',
    [],
    {},
    [1, null, 'two', { three: [3] }],
    { a: 1, b: undefined, c: [undefined, () => 1], 'd"e': { f: null } },
  ]) {
    const json = JSON.stringify(v);
    assert.is(show(v), typeof v === 'string' ? `'${v}'` : json);
  }
  // Longer ones: the same start, cut to sixty.
  const big = { messages: Array.from({ length: 50 }, (_, i) => ({ role: 'user', content: `m${i}` })) };
  assert.is(show(big), `${JSON.stringify(big).slice(0, 57)}...`);
});

test('show prints the start of values too big or too deep to serialize', () => {
  let deep: unknown[] = [];
  for (let i = 0; i < 1_000_000; i++) deep = [deep];
  assert.is(show(deep), `${'['.repeat(57)}...`);
  const wide: object[] = new Array<object>(6_000_000).fill({});
  assert.is(show(wide), `${JSON.stringify(wide.slice(0, 30)).slice(0, 57)}...`);
  const keys = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, i]));
  assert.is(show(keys), `${JSON.stringify(keys).slice(0, 57)}...`);
});

test('required: the missing field, with its path inside arrays', () => {
  assert.equal(detailsOf('chat-request.json', { model: 'm', messages: [{ role: 'user' }] }), [
    {
      param: 'messages[0].content',
      code: 'missing_required_parameter',
      message: "Missing required parameter: 'messages[0].content'.",
    },
  ]);
});

test('type: expected and actual type in words', () => {
  const [d] = detailsOf('chat-request.json', { model: 'm', messages: 'hi' });
  assert.equal(d, {
    param: 'messages',
    code: 'invalid_type',
    message: "Invalid type for 'messages': expected an array, but got a string instead.",
  });
  const [n] = detailsOf('chat-request.json', { model: 'm', messages: [{ role: 'user', content: null }] });
  assert.match(n!.message, /expected a string, but got null/);
  const [o] = detailsOf('chat-request.json', { model: 'm', messages: [{ role: 'user', content: {} }] });
  assert.match(o!.message, /but got an object/);
});

test('minimum and maximum: decimal and integer wording with the limit and the value', () => {
  const [t] = detailsOf('chat-request.json', { model: 'm', messages: [{ role: 'u', content: 'c' }], temperature: 2.5 });
  assert.equal(t, {
    param: 'temperature',
    code: 'decimal_above_max_value',
    message: "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.5 instead.",
  });
  const [p] = detailsOf('chat-request.json', { model: 'm', messages: [{ role: 'u', content: 'c' }], top_p: -0.1 });
  assert.is(p!.code, 'decimal_below_min_value');
  assert.match(p!.message, />= 0, but got -0.1/);
  const [m] = detailsOf('chat-request.json', { model: 'm', messages: [{ role: 'u', content: 'c' }], max_tokens: 0 });
  assert.is(m!.code, 'integer_below_min_value');
});

test('exclusive limits are worded as limits too', () => {
  const ajv = new Ajv2020({ allErrors: true, verbose: true });
  const fn = ajv.compile({
    type: 'object',
    properties: { a: { type: 'number', exclusiveMaximum: 1 }, b: { type: 'integer', exclusiveMinimum: 0 } },
  });
  fn({ a: 1, b: 0 });
  const details = toDetails(fn.errors!);
  assert.equal(
    details.map((d) => d.code),
    ['decimal_above_max_value', 'integer_below_min_value'],
  );
  assert.match(details[0]!.message, /< 1, but got 1/);
});

test('maxLength and minLength count characters as code points', () => {
  const [d] = detailsOf('image-generation-request.json', { model: 'm', prompt: '😀'.repeat(1001) });
  assert.equal(d, {
    param: 'prompt',
    code: 'string_above_max_length',
    message:
      "Invalid 'prompt': string too long. Expected a string with maximum length 1000, but got a string with length 1001 instead.",
  });
  assert.equal(detailsOf('image-generation-request.json', { model: 'm', prompt: '😀'.repeat(1000) }), []);
  const [e] = detailsOf('image-generation-request.json', { model: 'm', prompt: '' });
  assert.is(e!.code, 'string_below_min_length');
  assert.match(e!.message, /minimum length 1, but got a string with length 0/);
});

test('minItems, enum, const and pattern', () => {
  const [a] = detailsOf('chat-request.json', { model: 'm', messages: [] });
  assert.equal(a, {
    param: 'messages',
    code: 'array_below_min_length',
    message: "Invalid 'messages': array too short. Expected an array with minimum length 1, but got 0 items instead.",
  });
  const [b] = detailsOf('image-generation-request.json', { model: 'm', prompt: 'p', size: '512x512' });
  assert.equal(b, {
    param: 'size',
    code: 'invalid_value',
    message:
      "Invalid value for 'size': expected one of '1024x1024', '1792x1024', '1024x1792', but got '512x512' instead.",
  });
  const task = {
    id: 'v',
    status: 'completed',
    model: 'm',
    mode: 'text_to_video',
    created_at: 0,
    video: { url: 'http://x/y', content_type: 'video/webm', duration: 4, resolution: '768x768', seed: 1 },
  };
  const c = detailsOf('video-task.json', task);
  assert.ok(
    c.some(
      (x) =>
        x.param === 'video.content_type' &&
        x.message === "Invalid value for 'video.content_type': expected 'video/mp4', but got 'video/webm' instead.",
    ),
    JSON.stringify(c),
  );
  const [d] = detailsOf('voice-tts-request.json', { text: 't', voice_id: 'Rachel' });
  assert.equal(d, {
    param: 'voice_id',
    code: 'invalid_value',
    message: "Invalid value for 'voice_id': 'Rachel' does not match the pattern ^[a-z][a-z0-9_-]{0,63}$.",
  });
});

test('format: base64 images and URLs are explained', () => {
  const [a] = detailsOf('image-edit-request.json', { prompt: 'p', image: 'not base64!' });
  assert.equal(a, {
    param: 'image',
    code: 'invalid_value',
    message: "Invalid value for 'image': expected base64 or a data URI (data:image/png;base64,...) of an image.",
  });
  const [b] = detailsOf('video-request.json', {
    model: 'm',
    mode: 'image_to_video',
    prompt: 'p',
    image_url: 'just words',
  });
  assert.equal(b, {
    param: 'image_url',
    code: 'invalid_value',
    message: "Invalid value for 'image_url': expected an absolute URL.",
  });
  const [c] = detailsOf('config.json', { publicUrl: 'x' });
  assert.is(c!.param, 'publicUrl');
});

test('additionalProperties names the unknown field (strict variants)', () => {
  const details = toDetails(
    schemas().check(schemaId('chat-request.strict.json'), {
      model: 'm',
      messages: [{ role: 'u', content: 'c', colour: 1 }],
      foo: 1,
    }),
  );
  assert.equal(details, [
    { param: 'foo', code: 'unknown_parameter', message: 'Unrecognized request argument supplied: foo.' },
    {
      param: 'messages[0].colour',
      code: 'unknown_parameter',
      message: 'Unrecognized request argument supplied: messages[0].colour.',
    },
  ]);
});

test('if/anyOf/oneOf noise is dropped; the branch error remains', () => {
  const details = detailsOf('video-request.json', { model: 'm', mode: 'image_to_video', prompt: 'p' });
  assert.equal(details, [
    { param: 'image_url', code: 'missing_required_parameter', message: "Missing required parameter: 'image_url'." },
  ]);
  const clock = detailsOf('config.json', { clock: 'sometimes' });
  assert.ok(clock.length >= 1);
  assert.ok(clock.every((d) => d.param === 'clock'));
});

test('a number JSON.parse reads as infinity (1e400) is out of range, not "a number instead of a number"', () => {
  const body = JSON.parse(
    '{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":1e400,"max_tokens":-1e999}',
  );
  const [temperature, maxTokens] = toDetails(errorsOf('chat-request.json', body));
  assert.equal(temperature, {
    param: 'temperature',
    code: 'invalid_value',
    message:
      "Invalid 'temperature': the number is out of range (too large to be represented: it reads as infinity). Expected a number within ±1.7976931348623157e308.",
  });
  assert.match(
    maxTokens!.message,
    /^Invalid 'max_tokens': the number is out of range .* -infinity\). Expected an integer within/,
  );
  assert.is(maxTokens!.param, 'max_tokens');
});

test("a reserved name says so and why, naming the property: a latency profile called 'off' or 'catalogue'", () => {
  for (const name of ['off', 'catalogue']) {
    const details = detailsOf('config.json', { latency: { profiles: { [name]: { ttft: 1 } } } });
    assert.equal(details.length, 1, JSON.stringify(details));
    assert.is(details[0]!.param, `latency.profiles.${name}`);
    assert.match(
      details[0]!.message,
      new RegExp(`'${name}' is reserved \\(.*\`off\` and \`catalogue\` are settings, not names\\)`),
    );
    assert.not.match(details[0]!.message, /must NOT be valid/);
  }
  // A `not` that is no list of names is "not allowed", with the schema's description when it has one.
  const ajv = new Ajv2020({ allErrors: true, verbose: true });
  const fn = ajv.compile({ type: 'object', description: 'no x with y', not: { required: ['x'] } });
  fn({ x: 1 });
  assert.match(
    toDetails(fn.errors!)[0]!.message,
    /^Invalid value for 'body': \{"x":1\} is not allowed \(no x with y\)\.$/,
  );
});

test('other keywords fall back to Ajv wording; two rules on one field stay two details, exact duplicates merge', () => {
  const ajv = new Ajv2020({ allErrors: true, verbose: true });
  const fn = ajv.compile({ type: 'array', uniqueItems: true, maxItems: 1 });
  fn([1, 1]);
  const details = toDetails(fn.errors!);
  assert.is(details.length, 2);
  assert.ok(
    details.every(
      (d) => d.param === null && d.code === 'invalid_value' && d.message.startsWith("Invalid value for 'body': "),
    ),
  );
  const e = fn.errors![0]!;
  assert.is(toDetails([e, e]).length, 1);
  assert.is(toDetail({ ...e, keyword: 'oneOf' }), undefined);
});

test.run();
