import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { componentName, componentSchemas, type Json } from '../../../src/tools/openapi/components.js';
import { schemaId } from '../../../src/contract/schemas.js';

const known = (schemas: Record<string, Json>): Map<string, Json> =>
  new Map(
    Object.entries(schemas).map(([file, s]) => [
      schemaId(file),
      { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: schemaId(file), ...s },
    ]),
  );

test('component names are the schema file names in PascalCase', () => {
  assert.is(componentName(schemaId('chat-request.json')), 'ChatRequest');
  assert.is(componentName(schemaId('error.json')), 'Error');
  assert.is(componentName(schemaId('voice-tts-request.json')), 'VoiceTtsRequest');
});

test('referenced schemas are pulled in, $defs lifted to components, and every $ref made local', () => {
  const schemas = known({
    'a-request.json': {
      type: 'object',
      properties: { b: { $ref: 'b.json' }, c: { $ref: 'b.json#/$defs/small-thing' } },
    },
    'b.json': {
      type: 'object',
      properties: { self: { $ref: '#/$defs/small-thing' } },
      $defs: { 'small-thing': { type: 'string', maxLength: 3 } },
    },
    'unused.json': { type: 'null' },
  });
  assert.equal(componentSchemas([schemaId('a-request.json')], schemas), {
    ARequest: {
      type: 'object',
      properties: { b: { $ref: '#/components/schemas/B' }, c: { $ref: '#/components/schemas/BSmallThing' } },
    },
    B: { type: 'object', properties: { self: { $ref: '#/components/schemas/BSmallThing' } } },
    BSmallThing: { type: 'string', maxLength: 3 },
  });
});

test('what cannot become a local component is an error that names the schema', () => {
  const cases: [Record<string, Json>, RegExp][] = [
    [{ 'a.json': { $ref: 'missing.json' } }, /a\.json: \$ref missing\.json names no schema/],
    [{ 'a.json': { $ref: '#/properties/x' } }, /points inside a schema/],
    [{ 'a.json': { properties: { x: { $defs: { y: {} } } } } }, /\$defs below the top level/],
    [{ 'a.json': { $defs: { b: {} }, $ref: 'a-b.json' }, 'a-b.json': {} }, /share the component name AB/],
  ];
  for (const [schemas, message] of cases)
    assert.throws(() => componentSchemas([schemaId('a.json')], known(schemas)), message);
  assert.throws(() => componentSchemas([schemaId('nope.json')], known({})), /No schema with \$id/);
});

test.run();
