import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ignoredFieldsHeader, shapeOf, unknownFields } from '../../src/contract/knownFields.js';
import { operations } from '../../src/contract/operations.js';
import { schemaId } from '../../src/contract/schemas.js';

const chat = shapeOf(schemaId('chat-request.json'))!;

test('every depth where the schema lists properties: the body, each message, stream_options, voice_settings', () => {
  const body = {
    model: 'gpt-4o',
    messages: [
      { role: 'user', content: 'hi', name: 'me' },
      { role: 'assistant', content: 'yo', tool_calls: [{ id: 'x' }] },
    ],
    tools: [{ type: 'function' }],
    response_format: { type: 'json_object' },
    stream_options: { include_usage: true, include_obfuscation: false },
    stop: ['a'],
  };
  assert.equal(unknownFields(chat, body, 32), [
    '/messages/1/tool_calls',
    '/tools',
    '/response_format',
    '/stream_options/include_obfuscation',
  ]);
  const tts = shapeOf(schemaId('voice-tts-request.json'))!;
  assert.equal(
    unknownFields(
      tts,
      { text: 't', voice_id: 'rachel', voice_settings: { stability: 1, warmth: 2 }, output_format: 'mp3' },
      32,
    ),
    ['/voice_settings/warmth', '/output_format'],
  );
});

test('a body with every field known has none; values the schema does not describe as objects are not looked into', () => {
  assert.equal(
    unknownFields(
      chat,
      { model: 'm', messages: [{ role: 'u', content: 'c' }], stop: ['x'], stream_options: { include_usage: true } },
      32,
    ),
    [],
  );
  // stop is an array of strings: whatever it holds, there is no field to ignore in it.
  assert.equal(
    unknownFields(chat, { model: 'm', messages: [{ role: 'u', content: 'c' }], stop: [{ odd: 1 }] }, 32),
    [],
  );
});

test('closed schemas (the admin fault rule) have no shape: an unknown field there is a 400 already', () => {
  assert.is(shapeOf(schemaId('admin-fault-rule-request.json')), undefined);
  for (const op of operations.filter((o) => o.documented && o.requestSchema))
    assert.ok(shapeOf(op.requestSchema!), op.id);
});

test('field names become JSON pointers a header can carry: ~ and / escaped, other bytes percent-encoded', () => {
  const body = { model: 'm', messages: [], 'a/b': 1, 'c~d': 1, 'x,y z': 1, 'é\n': 1, '%': 1, '\ud800': 1 };
  assert.equal(unknownFields(chat, body, 32), ['/a~1b', '/c~0d', '/x%2Cy%20z', '/%C3%A9%0A', '/%25', '/%EF%BF%BD']);
});

test('bounded: at most max fields, then "..."; the header at most maxChars, then ",..."', () => {
  const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`extra_${i}`, i]));
  const fields = unknownFields(chat, { model: 'm', messages: [], ...many }, 5);
  assert.equal(fields, ['/extra_0', '/extra_1', '/extra_2', '/extra_3', '/extra_4', '...']);
  assert.is(ignoredFieldsHeader(fields, 1000), '/extra_0,/extra_1,/extra_2,/extra_3,/extra_4,...');
  assert.is(ignoredFieldsHeader(fields, 20), '/extra_0,/extra_1,...');
  assert.is(ignoredFieldsHeader([`/${'x'.repeat(50)}`], 20), '...');
});

test('each field name goes through the given rewrite first (the secret mask)', () => {
  assert.equal(
    unknownFields(chat, { model: 'm', messages: [], 'sk-secret-key': 1 }, 32, (k) => k.replace('secret', '***')),
    ['/sk-***-key'],
  );
});

test.run();
