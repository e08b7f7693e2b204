import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { base64Start, SCHEMA_BASE, schemaId, SchemaRegistry, strictId } from '../../src/contract/schemas.js';
import { SCHEMAS_DIR } from '../../src/lib/paths.js';
import { schemas } from '../support/index.js';

const files = readdirSync(SCHEMAS_DIR).filter((f) => f.endsWith('.json'));

test('every schema file is registered and compiles under its own $id, request schemas also in a strict variant', () => {
  const reg = schemas();
  for (const f of files) {
    assert.ok(reg.ids.includes(schemaId(f)), f);
    assert.type(reg.get(schemaId(f)), 'function');
    if (f.endsWith('-request.json')) {
      assert.ok(reg.ids.includes(strictId(schemaId(f))), `strict ${f}`);
      assert.type(reg.get(strictId(schemaId(f))), 'function'); // compiled on first use: it must compile
    }
  }
  assert.is(reg.ids.length, files.length + files.filter((f) => f.endsWith('-request.json')).length);
  assert.is(schemaId('x.json'), `${SCHEMA_BASE}x.json`);
  assert.is(strictId(schemaId('chat-request.json')), `${SCHEMA_BASE}chat-request.strict.json`);
});

test('an unknown schema id is an error', () => {
  assert.throws(() => schemas().get(schemaId('nope.json')), /No schema with \$id/);
  assert.throws(() => schemas().check(schemaId('nope.json'), {}), /No schema/);
});

test('a schema whose $id does not match its file name fails at start-up', () => {
  const dir = mkdtempSync(join(tmpdir(), 'schemas-'));
  try {
    writeFileSync(join(dir, 'a.json'), JSON.stringify({ $id: schemaId('b.json'), type: 'object' }));
    assert.throws(() => new SchemaRegistry(dir), /schemas\/a\.json: \$id must be/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a request schema that does not compile fails at start-up, not at request time', () => {
  const dir = mkdtempSync(join(tmpdir(), 'schemas-'));
  try {
    writeFileSync(
      join(dir, 'a-request.json'),
      JSON.stringify({ $id: schemaId('a-request.json'), type: 'object', properties: { x: { $ref: 'missing.json' } } }),
    );
    assert.throws(() => new SchemaRegistry(dir), /missing\.json/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('base64Start accepts base64 and data URIs and gives the payload offset', () => {
  assert.is(base64Start('aGVsbG8='), 0);
  assert.is(base64Start('aGVsbG8'), 0); // unpadded
  assert.is(base64Start('data:image/png;base64,aGVsbG8='), 'data:image/png;base64,'.length);
  assert.is(
    base64Start('data:image/svg+xml;charset=utf-8;base64,aGk='),
    'data:image/svg+xml;charset=utf-8;base64,'.length,
  );
  assert.is(base64Start('hello world'), undefined);
  assert.is(base64Start('aGVsb'), undefined); // 5 characters cannot be base64
  assert.is(base64Start(''), undefined);
  assert.is(base64Start('data:image/png,aGVsbG8='), undefined); // no ;base64 marker
  assert.is(base64Start('data:image/png;base64,'), undefined);
  assert.is(base64Start('data:image/png;base64,@@@@'), undefined);
});

test('strict variants reject unknown fields at every level, normal ones accept them', () => {
  const reg = schemas();
  const body = { text: 'hi', voice_id: 'rachel', extra: 1, voice_settings: { stability: 0.5, tone: 'warm' } };
  assert.equal(reg.check(schemaId('voice-tts-request.json'), body), []);
  const errs = reg.check(strictId(schemaId('voice-tts-request.json')), body);
  assert.equal(errs.map((e) => `${e.instancePath}:${String(e.params.additionalProperty)}`).sort(), [
    '/voice_settings:tone',
    ':extra',
  ]);
});

test('strict variants keep conditional rules: image_to_video still needs image_url', () => {
  const reg = schemas();
  const body = { model: 'gen3a_turbo', mode: 'image_to_video', prompt: 'p' };
  for (const id of [schemaId('video-request.json'), strictId(schemaId('video-request.json'))]) {
    const errs = reg.check(id, body);
    assert.ok(
      errs.some((e) => e.keyword === 'required' && e.params.missingProperty === 'image_url'),
      `${id}: ${JSON.stringify(errs)}`,
    );
    assert.equal(reg.check(id, { ...body, image_url: 'https://example.com/a.png' }), [], id);
    assert.equal(reg.check(id, { ...body, mode: 'text_to_video' }), [], id);
  }
});

test('every request schema in the strict variant accepts the documented fields', () => {
  const reg = schemas();
  const docs: Record<string, object> = {
    'chat-request.json': {
      model: 'm',
      messages: [{ role: 'user', content: 'c' }],
      temperature: 1,
      top_p: 1,
      max_tokens: 5,
      stream: false,
      stop: ['x'],
    },
    'image-generation-request.json': {
      model: 'm',
      prompt: 'p',
      size: '1024x1024',
      quality: 'hd',
      style: 'natural',
      n: 1,
    },
    'image-edit-request.json': { prompt: 'p', image: 'aGVsbG8=' },
    'video-request.json': {
      model: 'm',
      mode: 'image_to_video',
      prompt: 'p',
      image_url: 'https://x.test/a.png',
      duration: 8,
      resolution: '768x768',
      seed: 7,
    },
    'voice-tts-request.json': {
      text: 't',
      voice_id: 'rachel',
      model_id: 'eleven_v3',
      voice_settings: { stability: 0.5, similarity_boost: 0.5 },
    },
    'cloud-speech-request.json': { text: 't', voice: 'en-US-JennyNeural', style: 'cheerful', rate: 0, pitch: 0 },
  };
  for (const [file, body] of Object.entries(docs)) assert.equal(reg.check(strictId(schemaId(file)), body), [], file);
});

test.run();
