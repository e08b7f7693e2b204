// fixtures/limits.json is checked against schemas/limits.json at start-up (createServices), and the Limits type of
// src/domain/limits.ts is held to the same schema: one value of the type names every field, so tsc rejects it when
// the type gains or loses a field, and the test below fails when the schema lists other fields than it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkLimits, loadLimits, packageLimits, type Limits } from '../../src/domain/limits.js';
import { FIXTURES_DIR, SCHEMAS_DIR } from '../../src/lib/paths.js';
import { assertSchema, schemas } from '../support/index.js';

/** A node of schemas/limits.json, as far as this test reads it. */
interface SchemaNode {
  description?: string;
  $ref?: string;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  $defs?: Record<string, SchemaNode>;
}

const SCHEMA = JSON.parse(readFileSync(join(SCHEMAS_DIR, 'limits.json'), 'utf8')) as SchemaNode;
const readFixture = (): Record<string, Record<string, unknown>> =>
  JSON.parse(readFileSync(join(FIXTURES_DIR, 'limits.json'), 'utf8'));

/** A local `$ref` (`#/$defs/...`) followed; a reference to another schema file is left as it is (it holds a value, not
 * fields). */
const resolved = (node: SchemaNode): SchemaNode =>
  node.$ref?.startsWith('#/$defs/') ? SCHEMA.$defs![node.$ref.slice('#/$defs/'.length)]! : node;

/** Every field of Limits, each with a value the schema accepts (one output format stands for the map of them). */
const EVERY_FIELD: Limits = {
  requests: {
    maxJsonDepth: 1,
    maxJsonValues: 1,
    maxBodyBytes: { 'chat.completions': 1024 },
    maxDetails: 1,
    maxValuesForAllErrors: 1,
    largeBodyBytes: 1,
    maxIgnoredFields: 1,
    ignoredFieldsHeaderChars: 1,
    maxRequestIdChars: 1,
  },
  records: {
    maxPathChars: 1,
    maxDetails: 1,
    maxHeaders: 1,
    maxHeaderNameChars: 1,
    maxHeaderChars: 1,
    maxBodyChars: 1,
    maxResponseBodyChars: 1,
    maxStreamEvents: 1,
    maxStreamEventChars: 1,
    maxHeldResponseBytes: 1,
    maxModelChars: 1,
  },
  faults: {
    maxRules: 1,
    maxQuotedChars: 8,
    bounds: {
      status: { minimum: 400, maximum: 599 },
      retryAfter: { minimum: 0, maximum: 1 },
      delayMs: { minimum: 0, maximum: 1 },
      streamCut: { minimum: 0, maximum: 1 },
      stall: { minimum: 0, maximum: 1 },
    },
  },
  latencyProfiles: { maxCount: 1 },
  state: { healthPingMs: 1 },
  feeds: { maxFollowers: 1, heartbeatMs: 1000 },
  clientCheck: { burstMs: 1 },
  messages: {
    maxQuotedChars: 1,
    maxPathChars: 1,
    maxReasonChars: 1,
    maxJsonErrorChars: 1,
    maxEncodingChars: 1,
    maxPacingPartChars: 1,
    maxSsmlValueChars: 1,
  },
  proxyReport: { maxRequests: 1, maxBodyChars: 1 },
  images: { defaultSize: '1024x1024', defaultQuality: 'hd', defaultStyle: 'natural' },
  imageEdit: { maxWidth: 1, maxHeight: 1 },
  video: { defaultDuration: 8, defaultResolution: '768x768', fps: 1, tasksKept: 1 },
  speech: {
    charactersPerSecond: 1,
    minSeconds: 0,
    maxSeconds: 1,
    defaultOutputFormat: 'riff-8khz-8bit-mono-alaw',
    outputFormats: { 'riff-8khz-8bit-mono-alaw': { sampleRate: 8000, bitsPerSample: 8, encoding: 'alaw' } },
  },
};

/** Where a value and the schema disagree on fields: `schema only: a.b` or `type only: a.b` (a map's entries each
 * checked against its value schema). */
function differences(schemaNode: SchemaNode, value: unknown, path = ''): string[] {
  const node = resolved(schemaNode);
  if (!value || typeof value !== 'object') return [];
  const at = (key: string) => (path ? `${path}.${key}` : key);
  if (node.properties) {
    const listed = Object.keys(node.properties).filter((k) => k !== '$comment');
    return [
      ...listed.filter((k) => !(k in value)).map((k) => `schema only: ${at(k)}`),
      ...Object.keys(value)
        .filter((k) => !listed.includes(k))
        .map((k) => `type only: ${at(k)}`),
      ...listed
        .filter((k) => k in value)
        .flatMap((k) => differences(node.properties![k]!, (value as Record<string, unknown>)[k], at(k))),
    ];
  }
  if (node.additionalProperties && typeof node.additionalProperties === 'object') {
    return Object.entries(value).flatMap(([k, v]) => differences(node.additionalProperties as SchemaNode, v, at(k)));
  }
  return [];
}

test('fixtures/limits.json matches schemas/limits.json, and loadLimits reads it as it is', () => {
  assert.equal(checkLimits(loadLimits(), schemas()), readFixture());
});

test('packageLimits, where the mock reads its limits, gives the file checked, read once per schema registry', () => {
  const limits = packageLimits(schemas());
  assert.equal(limits, readFixture());
  assert.is(packageLimits(schemas()), limits, 'one reading for every server of the process');
  assert.throws(() => ((limits.records as { maxBodyChars: number }).maxBodyChars = 1), TypeError, 'shared, so frozen');
  assert.ok(Object.isFrozen(limits.speech.outputFormats[limits.speech.defaultOutputFormat]), 'to the leaves');
});

test('a limits file that is not JSON stops the load with the file named and what to do, not a bare parse error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'uam-limits-'));
  try {
    writeFileSync(join(dir, 'limits.json'), '{"records": ');
    assert.throws(
      () => loadLimits(dir),
      (err: Error) =>
        err.message.startsWith(`${join(dir, 'limits.json')} could not be read as JSON (`) &&
        /restore it from the package/.test(err.message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the Limits type and schemas/limits.json list the same fields, nested ones too', () => {
  assert.equal(differences(SCHEMA, EVERY_FIELD), []);
  assertSchema('limits.json', EVERY_FIELD);
  // The comparison itself finds a field on either side.
  assert.equal(differences(SCHEMA, { ...EVERY_FIELD, extra: 1, video: { fps: 1 } }), [
    'type only: extra',
    'schema only: video.defaultDuration',
    'schema only: video.defaultResolution',
    'schema only: video.tasksKept',
  ]);
});

test('schemas/limits.json describes every field, and closes every object', () => {
  const gaps = (schemaNode: SchemaNode, path: string): string[] => {
    const node = resolved(schemaNode);
    const own = path && !schemaNode.description && !node.description ? [`${path}: no description`] : [];
    if (node.properties) {
      if (node.additionalProperties !== false) own.push(`${path || '(root)'}: additionalProperties is not false`);
      return [
        ...own,
        ...Object.entries(node.properties).flatMap(([k, child]) => gaps(child, path ? `${path}.${k}` : k)),
      ];
    }
    if (node.additionalProperties && typeof node.additionalProperties === 'object')
      return [...own, ...gaps(node.additionalProperties, `${path}.*`)];
    return own;
  };
  assert.equal(gaps(SCHEMA, ''), []);
});

/** fixtures/limits.json with one change, as a fresh copy. */
function broken(change: (limits: Record<string, Record<string, unknown>>) => void): unknown {
  const limits = readFixture();
  change(limits);
  return limits;
}

test('a wrong type, an unknown or missing field or a value out of range stops start-up, naming the field', () => {
  const cases: [string, (l: Record<string, Record<string, unknown>>) => void, RegExp][] = [
    ['a string for a number', (l) => (l.records!.maxDetails = '20'), /records\.maxDetails: .*expected an integer/],
    ['an unknown field', (l) => (l.records!.maxDetail = 20), /records\.maxDetail: /],
    ['an unknown group', (l) => (l.audio = {}), /audio: /],
    ['a missing field', (l) => delete l.video!.fps, /video\.fps: Missing required/],
    ['a count below 1', (l) => (l.requests!.maxJsonDepth = 0), /requests\.maxJsonDepth: .*>= 1/],
    ['a fraction for a count', (l) => (l.video!.tasksKept = 1.5), /video\.tasksKept: .*integer/],
    [
      'a default no request may name',
      (l) => (l.images!.defaultSize = '10x10'),
      /images\.defaultSize: .*expected one of '1024x1024'/,
    ],
    ['a default duration no request may name', (l) => (l.video!.defaultDuration = 5), /video\.defaultDuration: /],
    [
      'A-law at 16 bits',
      (l) =>
        ((l.speech!.outputFormats as Record<string, { bitsPerSample: number }>)[
          'riff-8khz-8bit-mono-alaw'
        ]!.bitsPerSample = 16),
      /bitsPerSample: .*expected 8/,
    ],
    [
      'an encoding the mock cannot write',
      (l) =>
        ((l.speech!.outputFormats as Record<string, { encoding: string }>)['riff-8khz-16bit-mono-pcm']!.encoding =
          'mp3'),
      /encoding: /,
    ],
    [
      'a default output format that is not one of the formats',
      (l) => (l.speech!.defaultOutputFormat = 'riff-96khz-24bit-mono-pcm'),
      /speech\.defaultOutputFormat .* is not one of speech\.outputFormats/,
    ],
    [
      'a body limit for an operation that takes no body',
      (l) => (l.requests!.maxBodyBytes = { 'models.list': 2048 }),
      /requests\.maxBodyBytes names models\.list, which is no operation that takes a body/,
    ],
    [
      'a body limit for no operation at all',
      (l) => (l.requests!.maxBodyBytes = { 'chat.complete': 2048 }),
      /requests\.maxBodyBytes names chat\.complete/,
    ],
    [
      'a body limit under 1 KiB',
      (l) => (l.requests!.maxBodyBytes = { 'chat.completions': 10 }),
      /requests\.maxBodyBytes\.chat\.completions: /,
    ],
  ];
  for (const [what, change, message] of cases) {
    assert.throws(
      () => checkLimits(broken(change), schemas()),
      (e: Error) => e.message.startsWith('fixtures/limits.json') && message.test(e.message),
      what,
    );
  }
});

test.run();
