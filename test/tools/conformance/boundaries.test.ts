import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateBoundaries, type GeneratorInput } from '../../../src/tools/conformance/boundaries.js';
import { clone, dotted, getAt, setAt, unsetAt } from '../../../src/verdict/pointer.js';
import {
  add,
  filler,
  outsideEnum,
  patternMismatch,
  slug,
  step,
  wrongType,
} from '../../../src/tools/conformance/values.js';

test('pointer: get, set (creating arrays and objects), unset, dotted', () => {
  const doc: Record<string, unknown> = { a: [{ b: 1 }] };
  assert.is(getAt(doc, '/a/0/b'), 1);
  assert.is(getAt(doc, '/a/0/b/c'), undefined);
  assert.is(getAt(doc, ''), doc);
  setAt(doc, '/x/0/y', 2);
  setAt(doc, '/p~1q', 3);
  assert.equal(doc.x, [{ y: 2 }]);
  assert.is(doc['p/q'], 3);
  unsetAt(doc, '/a/0/b');
  unsetAt(doc, '/nothing/here');
  assert.equal(doc.a, [{}]);
  assert.is(dotted('/messages/0/role'), 'messages.0.role');
  assert.is(clone(undefined), undefined);
});

test('values: wrong types are never coercible, steps scale with the range, enums and patterns are broken', () => {
  assert.is(wrongType({ type: 'string' }), 12345);
  assert.is(wrongType({ type: 'number' }), 'not-a-number');
  assert.is(wrongType({ type: 'boolean' }), 'not-a-boolean');
  assert.is(wrongType({ type: 'array' }), 'not-an-array');
  assert.is(wrongType({ type: 'object' }), 'not-an-object');
  assert.is(wrongType({ type: ['string', 'integer'] }), null);
  assert.is(step({ type: 'number', minimum: 0, maximum: 2 }), 0.01);
  assert.is(step({ type: 'number', minimum: -50, maximum: 50 }), 1);
  assert.is(step({ type: 'integer', minimum: 1 }), 1);
  assert.is(step({ type: 'number', maximum: 0 }), 0.01);
  assert.is(add(2, 0.01), 2.01);
  assert.is(add(0.7, -0.001), 0.699);
  assert.is(outsideEnum([4, 8, 16]), 5);
  assert.is(outsideEnum([1, 2, 3]), 4);
  assert.is(outsideEnum(['a', 'b']), 'conformance-invalid-value');
  assert.is(patternMismatch('^[a-z]+$'), 'Not A Valid Value!');
  assert.is(patternMismatch('.*'), undefined);
  assert.is([...filler(1001)].length, 1001);
  assert.is(slug('image_to_video'), 'image_to_video');
  assert.is(slug('1792x1024'), '1792x1024');
  assert.is(slug('A B/C'), 'a-b-c');
});

const schema = {
  type: 'object',
  required: ['mode', 'level'],
  properties: {
    mode: { enum: ['plain', 'linked'] },
    level: { type: 'number', minimum: 0, maximum: 2 },
    name: { type: 'string', maxLength: 3 },
    link: { type: 'string', format: 'uri' },
    tags: { type: 'array', items: { type: 'string' } },
  },
};

// A hand-written validator of the schema above (with "linked needs link"), so the test does not rely on Ajv.
const isValid = (b: unknown): boolean => {
  const o = b as Record<string, unknown>;
  if (!['plain', 'linked'].includes(o.mode as string)) return false;
  if (typeof o.level !== 'number' || o.level < 0 || o.level > 2) return false;
  if (o.name !== undefined && (typeof o.name !== 'string' || o.name.length > 3)) return false;
  if (o.link !== undefined && (typeof o.link !== 'string' || !o.link.includes('://'))) return false;
  if (o.mode === 'linked' && o.link === undefined) return false;
  if (o.tags !== undefined && (!Array.isArray(o.tags) || o.tags.some((t) => typeof t !== 'string'))) return false;
  return true;
};

const input: GeneratorInput = {
  prefix: 'x',
  schemaFile: 'x-request.json',
  schema,
  base: { mode: 'plain', level: 1 },
  samples: { '/link': 'https://example.com/a' },
  documented: { '/level': { keywords: ['minimum', 'maximum', 'required'], rule: 'level 0 to 2' } },
  isValid,
};

test('boundaries: missing, wrong type, just inside and outside, enum values, formats; documented only where stated', () => {
  const cases = generateBoundaries(input);
  const byId = new Map(cases.map((c) => [c.id, c]));
  const types = (field: string, kinds: string[]) => kinds.map((k) => `x.${field}.wrong-type${k && `-${k}`}`);
  assert.equal(
    [...byId.keys()],
    [
      'x.mode.missing',
      'x.mode.enum-linked',
      'x.mode.not-in-enum',
      ...types('mode', ['', 'boolean', 'null', 'object', 'array']),
      'x.level.missing',
      ...types('level', ['', 'string-form', 'boolean', 'null', 'object', 'array']),
      'x.level.fraction',
      'x.level.at-minimum',
      'x.level.below-minimum',
      'x.level.at-maximum',
      'x.level.above-maximum',
      ...types('name', ['', 'boolean', 'null', 'object', 'array']),
      'x.name.at-max-length',
      'x.name.above-max-length',
      ...types('link', ['', 'boolean', 'null', 'object', 'array']),
      'x.link.bad-format',
      ...types('tags', ['', 'number', 'boolean', 'null', 'object']),
      ...types('tags.0', ['', 'boolean', 'null', 'object', 'array']),
    ],
  );
  // Every JSON type a field must not take, the string form of an allowed number among them (lax parsers coerce it).
  assert.equal(byId.get('x.level.wrong-type-string-form')!.body, { mode: 'plain', level: '1' });
  assert.equal(byId.get('x.level.wrong-type-null')!.body, { mode: 'plain', level: null });
  assert.equal(byId.get('x.mode.wrong-type-array')!.body, { mode: ['plain'], level: 1 });
  // A number inside the range that is not an integer, valid: a server reading integers only refuses it.
  assert.equal(byId.get('x.level.fraction')!.body, { mode: 'plain', level: 0.5 });
  assert.is(byId.get('x.level.fraction')!.status, 200);
  assert.is(
    byId.get('x.mode.wrong-type')!.rule,
    'schemas/x-request.json enum at /mode (a rule of the mock; the API document does not state it)',
  );
  assert.equal(byId.get('x.level.above-maximum')!.body, { mode: 'plain', level: 2.01 });
  assert.is(byId.get('x.level.above-maximum')!.status, 400);
  assert.is(byId.get('x.level.above-maximum')!.profile, 'documented');
  assert.is(byId.get('x.level.above-maximum')!.rule, 'level 0 to 2');
  assert.is(byId.get('x.level.wrong-type')!.profile, 'full');
  assert.match(byId.get('x.level.wrong-type')!.rule, /x-request\.json type at \/level \(a rule of the mock/);
  // A valid enum value that makes another field required gets it from the samples.
  assert.equal(byId.get('x.mode.enum-linked')!.body, { mode: 'linked', level: 1, link: 'https://example.com/a' });
  assert.is(byId.get('x.mode.enum-linked')!.status, 200);
  assert.equal(byId.get('x.tags.0.wrong-type')!.body, { mode: 'plain', level: 1, tags: [12345] });
  assert.is(byId.get('x.level.missing')!.description, 'a body without level is rejected with 400');
  assert.is(byId.get('x.tags.0.wrong-type')!.description, 'tags[] = 12345 (not string) is rejected with 400');
});

test('boundaries: a generated case that does not do what it claims is a suite error', () => {
  assert.throws(() => generateBoundaries({ ...input, isValid: () => true }), /should be invalid/);
});

test.run();
