import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { operations } from '../../src/contract/operations.js';
import { assertError, pathOf, post, request, useMock, VALID, withMock } from '../support/index.js';
import type { Context } from 'koa';
import { boundOperations } from '../../src/app/bindings.js';
import { ApiError } from '../../src/contract/errors.js';
import { SchemaRegistry } from '../../src/contract/schemas.js';
import { loadLimits } from '../../src/domain/limits.js';
import { requestState } from '../../src/pipeline/steps.js';
import { validate } from '../../src/pipeline/validate.js';

const mock = useMock(test);

type Change = Record<string, unknown> | ((b: Record<string, unknown>) => Record<string, unknown>);
const without = (field: string) => (b: Record<string, unknown>) => {
  const { [field]: _, ...rest } = b;
  return rest;
};
const apply = (id: string, change: Change) =>
  typeof change === 'function' ? change({ ...VALID[id] }) : { ...VALID[id], ...change };
const base64Text = Buffer.from('just some text, not an image').toString('base64');

/** [operation, change to the valid body, the param the 400 must name, the error code]. */
const BROKEN: [string, Change, string, string][] = [
  ['chat.completions', without('model'), 'model', 'missing_required_parameter'],
  ['chat.completions', without('messages'), 'messages', 'missing_required_parameter'],
  ['chat.completions', { model: 5 }, 'model', 'invalid_type'],
  ['chat.completions', { messages: 'hi' }, 'messages', 'invalid_type'],
  ['chat.completions', { messages: [] }, 'messages', 'array_below_min_length'],
  ['chat.completions', { messages: ['hi'] }, 'messages[0]', 'invalid_type'],
  ['chat.completions', { messages: [{ content: 'x' }] }, 'messages[0].role', 'missing_required_parameter'],
  ['chat.completions', { messages: [{ role: 'user' }] }, 'messages[0].content', 'missing_required_parameter'],
  ['chat.completions', { messages: [{ role: 1, content: 'x' }] }, 'messages[0].role', 'invalid_type'],
  [
    'chat.completions',
    {
      messages: [
        { role: 'user', content: 'ok' },
        { role: 'user', content: 5 },
      ],
    },
    'messages[1].content',
    'invalid_type',
  ],
  ['chat.completions', { temperature: 2.0001 }, 'temperature', 'decimal_above_max_value'],
  ['chat.completions', { temperature: -0.0001 }, 'temperature', 'decimal_below_min_value'],
  ['chat.completions', { temperature: '1' }, 'temperature', 'invalid_type'],
  ['chat.completions', { top_p: 1.0001 }, 'top_p', 'decimal_above_max_value'],
  ['chat.completions', { top_p: -0.0001 }, 'top_p', 'decimal_below_min_value'],
  ['chat.completions', { max_tokens: 'ten' }, 'max_tokens', 'invalid_type'],
  ['chat.completions', { max_tokens: 0 }, 'max_tokens', 'integer_below_min_value'],
  ['chat.completions', { stream: 'yes' }, 'stream', 'invalid_type'],
  ['chat.completions', { stop: 'END' }, 'stop', 'invalid_type'],
  ['chat.completions', { stop: ['END', 3] }, 'stop[1]', 'invalid_type'],
  ['images.generate', without('model'), 'model', 'missing_required_parameter'],
  ['images.generate', without('prompt'), 'prompt', 'missing_required_parameter'],
  ['images.generate', { prompt: '' }, 'prompt', 'string_below_min_length'],
  ['images.generate', { prompt: 'p'.repeat(1001) }, 'prompt', 'string_above_max_length'],
  ['images.generate', { prompt: '🌅'.repeat(1001) }, 'prompt', 'string_above_max_length'],
  ['images.generate', { size: '512x512' }, 'size', 'invalid_value'],
  ['images.generate', { quality: 'ultra' }, 'quality', 'invalid_value'],
  ['images.generate', { style: 'cinematic' }, 'style', 'invalid_value'],
  ['images.generate', { n: 0 }, 'n', 'integer_below_min_value'],
  ['images.generate', { n: '1' }, 'n', 'invalid_type'],
  ['images.generate', { n: 2 }, 'n', 'integer_above_max_value'],
  ['images.edit', without('prompt'), 'prompt', 'missing_required_parameter'],
  ['images.edit', without('image'), 'image', 'missing_required_parameter'],
  ['images.edit', { image: 5 }, 'image', 'invalid_type'],
  ['images.edit', { image: 'not base64 at all!' }, 'image', 'invalid_value'],
  ['images.edit', { image: `data:image/png;base64,${'@'.repeat(8)}` }, 'image', 'invalid_value'],
  ['images.edit', { image: base64Text }, 'image', 'invalid_image'],
  ['video.generate', without('model'), 'model', 'missing_required_parameter'],
  ['video.generate', without('mode'), 'mode', 'missing_required_parameter'],
  ['video.generate', without('prompt'), 'prompt', 'missing_required_parameter'],
  ['video.generate', { mode: 'video_to_video' }, 'mode', 'invalid_value'],
  ['video.generate', { mode: 'image_to_video' }, 'image_url', 'missing_required_parameter'],
  ['video.generate', { mode: 'image_to_video', image_url: 'a picture' }, 'image_url', 'invalid_value'],
  ['video.generate', { duration: 5 }, 'duration', 'invalid_value'],
  ['video.generate', { duration: '4' }, 'duration', 'invalid_value'],
  ['video.generate', { resolution: '1920x1080' }, 'resolution', 'invalid_value'],
  ['video.generate', { seed: 'lucky' }, 'seed', 'invalid_type'],
  ['voice.tts', without('text'), 'text', 'missing_required_parameter'],
  ['voice.tts', without('voice_id'), 'voice_id', 'missing_required_parameter'],
  ['voice.tts', { text: '' }, 'text', 'string_below_min_length'],
  ['voice.tts', { text: 't'.repeat(2501) }, 'text', 'string_above_max_length'],
  ['voice.tts', { text: '🎤'.repeat(2501) }, 'text', 'string_above_max_length'],
  ['voice.tts', { voice_id: 'Rachel Green' }, 'voice_id', 'invalid_value'],
  ['voice.tts', { voice_id: 'nobody' }, 'voice_id', 'voice_not_found'],
  ['voice.tts', { model_id: 'gpt-4o' }, 'model_id', 'model_not_supported'],
  ['voice.tts', { voice_settings: 'calm' }, 'voice_settings', 'invalid_type'],
  ['voice.tts', { voice_settings: { stability: 'high' } }, 'voice_settings.stability', 'invalid_type'],
  ['cloud.speech', without('text'), 'text', 'missing_required_parameter'],
  ['cloud.speech', without('voice'), 'voice', 'missing_required_parameter'],
  ['cloud.speech', { voice: 'Jenny' }, 'voice', 'invalid_value'],
  ['cloud.speech', { voice: 'en-US-NobodyNeural' }, 'voice', 'model_not_found'],
  ['cloud.speech', { style: 7 }, 'style', 'invalid_type'],
  ['cloud.speech', { rate: 50.5 }, 'rate', 'decimal_above_max_value'],
  ['cloud.speech', { rate: -50.5 }, 'rate', 'decimal_below_min_value'],
  ['cloud.speech', { rate: '0' }, 'rate', 'invalid_type'],
  ['cloud.speech', { pitch: 51 }, 'pitch', 'decimal_above_max_value'],
  ['cloud.speech', { pitch: -51 }, 'pitch', 'decimal_below_min_value'],
];

/** Bodies just inside every rule: each must be a 200. */
const INSIDE: [string, Change][] = [
  ['chat.completions', { temperature: 0 }],
  ['chat.completions', { temperature: 2 }],
  ['chat.completions', { top_p: 0 }],
  ['chat.completions', { top_p: 1 }],
  ['chat.completions', { stop: [] }],
  ['chat.completions', { stop: ['END', 'STOP'] }],
  ['chat.completions', { max_tokens: 1 }],
  [
    'chat.completions',
    {
      messages: [
        { role: 'system', content: '' },
        { role: 'user', content: 'hi' },
      ],
    },
  ],
  ['images.generate', { prompt: 'p'.repeat(1000) }],
  ['images.generate', { prompt: '🌅'.repeat(1000) }],
  ['images.generate', { n: 1, size: '1792x1024', quality: 'hd', style: 'natural' }],
  ['images.generate', { size: '1024x1792', quality: 'standard', style: 'vivid' }],
  ['images.edit', { image: `data:image/png;base64,${VALID['images.edit']!.image as string}` }],
  ['video.generate', { duration: 4 }],
  ['video.generate', { duration: 8, resolution: '768x768' }],
  ['video.generate', { duration: 16, resolution: '768x1280' }],
  ['video.generate', { mode: 'image_to_video', image_url: 'https://example.com/cat.png' }],
  ['voice.tts', { text: 't'.repeat(2500) }],
  ['voice.tts', { text: '🎤'.repeat(2500) }],
  ['voice.tts', { model_id: 'eleven_multilingual_v2', voice_settings: { stability: 0, similarity_boost: 1 } }],
  ['cloud.speech', { rate: -50, pitch: 50 }],
  ['cloud.speech', { rate: 50, pitch: -50, style: 'cheerful' }],
];

test('each broken rule, one at a time, is a 400 envelope naming the field and the rule', async () => {
  const { url } = mock();
  for (const [id, change, param, code] of BROKEN) {
    const res = await post(url, pathOf(id), apply(id, change));
    const label = `${id} ${typeof change === 'function' ? 'without a field' : JSON.stringify(change).slice(0, 80)}`;
    assertError(res, 400, param);
    assert.is(res.json.error.code, code, label);
    assert.is(res.json.error.type, 'invalid_request_error', label);
    assert.ok(
      res.json.error.message.includes(`'${param}'`) || res.json.error.message.includes(param),
      `${label}: ${res.json.error.message}`,
    );
  }
});

test('each value just inside a rule is a 200', async () => {
  const { url } = mock();
  for (const [id, change] of INSIDE) {
    const res = await post(url, pathOf(id), apply(id, change));
    assert.is(res.status, 200, `${id} ${JSON.stringify(change).slice(0, 80)}: ${res.text.slice(0, 300)}`);
  }
});

test('a schema 400 lists every violation in details; the message names the first and counts the rest', async () => {
  const { url } = mock();
  const res = await post(url, pathOf('chat.completions'), { messages: [{ role: 'user' }], temperature: 9, top_p: -1 });
  assertError(res, 400, 'model');
  const details = res.json.error.details as { param: string; code: string; message: string }[];
  assert.equal(details.map((d) => d.param).sort(), ['messages[0].content', 'model', 'temperature', 'top_p']);
  assert.is(res.json.error.message, `${details[0]!.message} (3 more in details)`);
  for (const d of details) assert.ok(d.message.includes(`'${d.param}'`), d.message);
  const one = await post(url, pathOf('chat.completions'), { ...VALID['chat.completions'], top_p: 2 });
  assert.equal(one.json.error.details.length, 1);
  assert.not.match(one.json.error.message, /more in details/);
});

test('a deeply nested value where a string belongs is a 400, not a crash', async () => {
  const { url } = mock();
  // As deep as the body parser lets through (the body object is one more level).
  const deep = `${'['.repeat(255)}${']'.repeat(255)}`;
  const res = await request(url, pathOf('images.generate'), {
    method: 'POST',
    raw: `{"model":"dall-e-3","prompt":"p","size":${deep}}`,
  });
  assertError(res, 400, 'size');
  assert.match(res.json.error.message, /but got \[+\.\.\. instead/); // shortened, not 510 brackets
});

test('unknown extra fields are accepted by default', async () => {
  const { url } = mock();
  for (const op of operations.filter((o) => o.documented && o.method === 'POST')) {
    const res = await post(url, op.path, { ...VALID[op.id], colour: 'blue', model_extra: { a: 1 } });
    assert.is(res.status, 200, `${op.id}: ${res.text.slice(0, 200)}`);
  }
});

test('ignored fields are named in x-mock-ignored-fields and in the journal; a body with none has no header', async () => {
  const { url } = mock();
  const body = {
    ...VALID['chat.completions'],
    tools: [{ type: 'function', function: { name: 'f' } }],
    response_format: { type: 'json_object' },
    messages: [{ role: 'user', content: 'hi', tool_call_id: 'x' }],
  };
  const res = await post(url, pathOf('chat.completions'), body, undefined, { 'x-request-id': 'ignored-1' });
  assert.is(res.status, 200);
  // In the body's order (messages keeps its place from VALID).
  assert.is(res.headers['x-mock-ignored-fields'], '/messages/0/tool_call_id,/tools,/response_format');
  const journal = await request(url, '/__admin/requests', { key: null });
  const entry = journal.json.data.find((e: { requestId: string }) => e.requestId === 'ignored-1');
  assert.equal(entry.ignoredFields, ['/messages/0/tool_call_id', '/tools', '/response_format']);
  // Every documented operation names them; a clean body gets no header.
  for (const op of operations.filter((o) => o.documented && o.method === 'POST')) {
    const extra = await post(url, op.path, { ...VALID[op.id], colour: 'blue' });
    assert.is(extra.headers['x-mock-ignored-fields'], '/colour', op.id);
    const clean = await post(url, op.path, VALID[op.id]);
    assert.is(clean.headers['x-mock-ignored-fields'], undefined, op.id);
  }
  // The header stays on an answer the handler refuses (an unknown model): the field was still ignored.
  const refused = await post(url, pathOf('chat.completions'), { ...body, model: 'no-such-model' });
  assertError(refused, 400, 'model');
  assert.ok(refused.headers['x-mock-ignored-fields']);
});

test('the ignored-fields header is bounded however many fields a body carries', async () => {
  const { url } = mock();
  const many = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`field_with_a_rather_long_name_${i}`, i]));
  const res = await post(url, pathOf('chat.completions'), { ...VALID['chat.completions'], ...many });
  assert.is(res.status, 200);
  const header = String(res.headers['x-mock-ignored-fields']);
  assert.ok(header.length <= 1024 + 4, `${header.length} characters`);
  assert.ok(header.endsWith(',...'), header.slice(-40));
  const journal = await request(url, '/__admin/requests', { key: null });
  const fields = journal.json.data.at(-1).ignoredFields as string[];
  assert.is(fields.length, 33);
  assert.is(fields.at(-1), '...');
});

test('with strict: true an unknown field is a 400 naming it, on every operation and inside nested objects', async () => {
  await withMock({ strict: true }, async ({ url }) => {
    for (const op of operations.filter((o) => o.documented && o.method === 'POST')) {
      const res = await post(url, op.path, { ...VALID[op.id], colour: 'blue' });
      assertError(res, 400, 'colour');
      assert.is(res.json.error.code, 'unknown_parameter', op.id);
      assert.match(res.json.error.message, /Unrecognized request argument supplied: colour/);
      assert.is((await post(url, op.path, VALID[op.id])).status, 200, op.id);
    }
    const nested = await post(url, pathOf('chat.completions'), {
      ...VALID['chat.completions'],
      messages: [{ role: 'user', content: 'hi', mood: 'happy' }],
    });
    assertError(nested, 400, 'messages[0].mood');
    const settings = await post(url, pathOf('voice.tts'), {
      ...VALID['voice.tts'],
      voice_settings: { stability: 0.5, warmth: 1 },
    });
    assertError(settings, 400, 'voice_settings.warmth');
    // Conditional rules still hold in strict mode.
    const video = await post(url, pathOf('video.generate'), { ...VALID['video.generate'], mode: 'image_to_video' });
    assertError(video, 400, 'image_url');
  });
});

test('a body refused once is refused again with the same 400: kept per schema, keyed by its whole text', async () => {
  const limits = loadLimits().requests;
  const step = validate(SchemaRegistry.shared(), false, limits);
  const ctx = {} as Context;
  const refuse = async (opId: string, body: unknown, raw = JSON.stringify(body)) => {
    const state = requestState(
      'req_1',
      boundOperations.find((op) => op.id === opId),
    );
    state.body = body as Record<string, unknown>;
    state.raw = raw;
    const err = await step(ctx, state);
    assert.instance(err, ApiError);
    return err as ApiError;
  };
  const bad = { model: 5, messages: [] };
  const first = await refuse('chat.completions', bad);
  assert.is(first.param, 'model');
  // The same text: the same answer, its envelope made once.
  assert.is(await refuse('chat.completions', bad), first);
  // Another text, even with the same value (a space more), is checked anew, and so is the same text under
  // another schema.
  const spaced = await refuse('chat.completions', bad, JSON.stringify(bad, null, 1));
  assert.is.not(spaced, first);
  assert.is(spaced.toJson(), first.toJson());
  const image = await refuse('images.generate', bad);
  assert.is.not(image, first);
  assert.is.not(image.toJson(), first.toJson());
  // A text longer than a memo's key is checked every time.
  const long = { ...bad, user: 'u'.repeat(5000) };
  assert.is.not(await refuse('chat.completions', long), await refuse('chat.completions', long));
});

test.run();
