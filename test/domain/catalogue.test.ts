import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalogue, type ModelKind } from '../../src/domain/catalogue.js';
import { ApiError } from '../../src/contract/errors.js';
import { FIXTURES_DIR } from '../../src/lib/paths.js';
import { schemas } from '../support/index.js';

const catalogue = new Catalogue(schemas());
const KINDS: ModelKind[] = ['text', 'image', 'video', 'voice', 'cloud-speech'];

function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    assert.instance(err, ApiError);
    return err as ApiError;
  }
  throw new Error('expected an ApiError');
}

/** A fixtures folder with models.json replaced (voices.json copied). */
function withFixture(models: unknown, fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'catalogue-'));
  try {
    writeFileSync(join(dir, 'models.json'), JSON.stringify(models));
    copyFileSync(join(FIXTURES_DIR, 'voices.json'), join(dir, 'voices.json'));
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('more than 50 models, every kind present, unique ids', () => {
  assert.ok(catalogue.models.length >= 50, `${catalogue.models.length} models`);
  for (const kind of KINDS) assert.ok(catalogue.ofKind(kind).length >= 1, kind);
  assert.is(new Set(catalogue.models.map((m) => m.id)).size, catalogue.models.length);
  assert.is(
    KINDS.reduce((n, k) => n + catalogue.ofKind(k).length, 0),
    catalogue.models.length,
  );
});

test('dall-e-3 allows one image per request; image and video models list the documented enums', () => {
  assert.is(catalogue.require('dall-e-3', 'image').limits.max_n, 1);
  for (const m of catalogue.ofKind('image'))
    assert.equal([...m.limits.sizes!].sort(), ['1024x1024', '1024x1792', '1792x1024'], m.id);
  for (const m of catalogue.ofKind('video')) {
    assert.equal(m.limits.durations, [4, 8, 16], m.id);
    assert.equal([...m.limits.resolutions!].sort(), ['1280x768', '768x1280', '768x768'], m.id);
  }
  for (const m of catalogue.ofKind('voice')) assert.is(m.limits.max_characters, 2500, m.id);
  for (const m of catalogue.ofKind('cloud-speech')) assert.match(m.id, /^[a-z]{2,3}-[A-Za-z]{2,4}-[A-Za-z0-9]+$/);
});

test('every image model says how it answers: gpt-image-1 b64_json only, the others url by default', () => {
  for (const m of catalogue.ofKind('image')) {
    const expected = m.id === 'gpt-image-1' ? ['b64_json', []] : ['url', ['url', 'b64_json']];
    assert.equal([m.limits.default_response_format, m.limits.response_formats], expected, m.id);
  }
  const image = { id: 'img', kind: 'image', owned_by: 'x', created: 1, limits: { max_n: 1 } };
  withFixture({ models: [image] }, (dir) => assert.throws(() => new Catalogue(schemas(), dir), /response_formats/));
  const odd = { ...image, limits: { response_formats: ['url'], default_response_format: 'b64_json' } };
  withFixture({ models: [odd] }, (dir) =>
    assert.throws(
      () => new Catalogue(schemas(), dir),
      /img: default_response_format b64_json is not one of its response_formats/,
    ),
  );
});

test('require returns the model of the right kind', () => {
  assert.is(catalogue.require('gpt-4o', 'text').id, 'gpt-4o');
  assert.is(catalogue.require('en-US-JennyNeural', 'cloud-speech', 'voice').kind, 'cloud-speech');
});

test('an unknown model is a 400 model_not_found that lists the models of the kind', () => {
  const e = apiError(() => catalogue.require('gpt-9', 'text'));
  assert.is(e.status, 400);
  assert.is(e.code, 'model_not_found');
  assert.is(e.param, 'model');
  for (const m of catalogue.ofKind('text')) assert.ok(e.message.includes(m.id), m.id);
  assert.match(e.message, /^Invalid 'model': the model 'gpt-9' does not exist\. Use a text model: gpt-4o, /);
  assert.not.ok(e.message.includes('dall-e-3'));
  const long = apiError(() => catalogue.require('x'.repeat(500), 'image'));
  assert.ok(long.message.length < 600, 'the unknown id is cut');
});

test('a model of another kind is a 400 model_not_supported that names both kinds and lists what fits', () => {
  const e = apiError(() => catalogue.require('dall-e-3', 'video', 'model'));
  assert.is(e.code, 'model_not_supported');
  assert.match(e.message, /^Invalid 'model': the model 'dall-e-3' is an image model, not a video model\. Use one of: /);
  for (const m of catalogue.ofKind('video')) assert.ok(e.message.includes(m.id), m.id);
  const v = apiError(() => catalogue.require('gpt-4o', 'voice', 'model_id'));
  assert.is(v.param, 'model_id');
  const n = apiError(() => catalogue.require('en-US-Nobody', 'cloud-speech', 'voice'));
  assert.match(
    n.message,
    /^Invalid 'voice': the voice 'en-US-Nobody' does not exist\. Use a neural voice: en-US-JennyNeural, /,
  );
});

test('requireVoice finds voices and lists them all for an unknown one', () => {
  assert.is(catalogue.requireVoice('rachel').name, 'Rachel');
  const e = apiError(() => catalogue.requireVoice('nobody'));
  assert.is(e.code, 'voice_not_found');
  assert.is(e.param, 'voice_id');
  assert.match(e.message, /^Invalid 'voice_id': the voice 'nobody' does not exist\. Use one of: rachel, /);
  for (const v of catalogue.voices) assert.ok(e.message.includes(v.id), v.id);
});

test('a catalogue that breaks its schema, or repeats an id, fails at start-up', () => {
  withFixture({ models: [{ id: 'a', kind: 'telepathy', owned_by: 'x', created: 0, limits: {} }] }, (dir) => {
    assert.throws(() => new Catalogue(schemas(), dir), /fixtures\/models\.json\/models\/0\/kind/);
  });
  const m = { id: 'a', kind: 'text', owned_by: 'x', created: 0, limits: {} };
  withFixture({ models: [m, m] }, (dir) => {
    assert.throws(() => new Catalogue(schemas(), dir), /duplicate model id/);
  });
  const real = JSON.parse(readFileSync(join(FIXTURES_DIR, 'models.json'), 'utf8')) as unknown;
  withFixture(real, (dir) => assert.is(new Catalogue(schemas(), dir).models.length, catalogue.models.length));
});

test('built-in latency profiles: every model has one, by family; media kinds their own', () => {
  const names = [...catalogue.profiles.keys()];
  for (const name of ['small-fast', 'medium', 'large-slow', 'reasoning', 'image', 'image-edit', 'video', 'speech'])
    assert.ok(names.includes(name), name);
  const of = (id: string) => catalogue.profileOf(catalogue.find(id)!);
  assert.is(of('gpt-4o-mini'), 'small-fast');
  assert.is(of('claude-opus-4-1-20250805'), 'large-slow');
  assert.is(of('o3-mini'), 'reasoning');
  assert.is(of('dall-e-3'), 'image');
  assert.is(of('gen4_turbo'), 'video');
  assert.is(of('eleven_v3'), 'speech');
  assert.is(of('en-US-JennyNeural'), 'speech');
  for (const m of catalogue.models) assert.ok(catalogue.profiles.has(catalogue.profileOf(m)!), m.id);
});

test('a profile the schema refuses, bounds out of order, or a model naming no profile fail at start-up', () => {
  const m = { id: 'a', kind: 'text', owned_by: 'x', created: 0, limits: {} };
  const cases: [unknown, RegExp][] = [
    [
      { profiles: { p: { ttft: { type: 'normal', mean: 1 } } }, models: [m] },
      /fixtures\/models\.json\/profiles\/p\/ttft/,
    ],
    [{ profiles: { p: { speed: 1 } }, models: [m] }, /fixtures\/models\.json\/profiles\/p/],
    [{ profiles: { off: {} }, models: [m] }, /fixtures\/models\.json\/profiles/],
    [
      { profiles: { p: { ttft: { type: 'uniform', lower: 9, upper: 1 } } }, models: [m] },
      /profiles\.p\.ttft: lower \(9\) is above upper \(1\)/,
    ],
    [{ profiles: { p: {} }, models: [{ ...m, profile: 'q' }] }, /a: profile 'q' is not a profile \(p\)/],
    [
      { profiles: { p: {} }, defaultProfiles: { text: 'q' }, models: [m] },
      /defaultProfiles\.text: 'q' is not a profile/,
    ],
  ];
  for (const [data, error] of cases)
    withFixture(data, (dir) => assert.throws(() => new Catalogue(schemas(), dir), error));
  withFixture({ profiles: { p: { ttft: 5 } }, defaultProfiles: { text: 'p' }, models: [m] }, (dir) => {
    const c = new Catalogue(schemas(), dir);
    assert.is(c.profileOf(c.models[0]!), 'p');
  });
});

test.run();
