import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadSuite } from '../../../src/tools/conformance/suite.js';
import { FIXTURES_DIR, SCHEMAS_DIR } from '../../../src/lib/paths.js';
import { schemaId, SchemaRegistry, strictId, SUBSCHEMA_IDS } from '../../../src/contract/schemas.js';
import { generateModule, writeGenerated } from '../../../src/contract/validators/generate.js';
import { VALID } from '../../support/index.js';

const dir = mkdtempSync(join(tmpdir(), 'validators-'));
const file = writeGenerated(join(dir, 'validators.cjs'));
const generated = new SchemaRegistry(SCHEMAS_DIR, file);
// Told to look where there is nothing: the registry compiles (the default, the build's folder, may hold a module).
const compiled = new SchemaRegistry(SCHEMAS_DIR, join(dir, 'none.cjs'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** Bodies to validate: every request of the conformance suite, the fixtures, valid bodies and odd values. */
function corpus(): unknown[] {
  const values = {
    chatModel: 'gpt-4o-mini',
    imageModel: 'dall-e-3',
    videoModel: 'gen3a_turbo',
    voiceId: 'rachel',
    cloudVoice: 'en-US-JennyNeural',
    ttsModel: 'eleven_multilingual_v2',
    imageUrl: 'https://example.com/a.png',
  };
  const bodies: unknown[] = loadSuite(compiled, values).cases.flatMap((c) =>
    c.request.body === undefined ? [] : [c.request.body],
  );
  for (const f of readdirSync(FIXTURES_DIR).filter((n) => n.endsWith('.json')))
    bodies.push(JSON.parse(readFileSync(join(FIXTURES_DIR, f), 'utf8')));
  bodies.push(
    ...Object.values(VALID),
    null,
    [],
    'text',
    42,
    {},
    { port: 'x', keys: [{}], pacing: { tokensPerSecond: -1 }, publicUrl: 'not a url' },
  );
  bodies.push(
    { image: 'data:image/png;base64,!!', prompt: 'x' },
    { image: 'aGVsbG8=', prompt: 'x', image_url: 'https://example.com/a.png' },
  );
  return bodies;
}

test('the registry of the package uses the generated module only where it finds one', () => {
  assert.ok(generated.generated);
  assert.not.ok(compiled.generated);
  assert.equal(generated.ids, compiled.ids);
});

test('generated validators give the same errors as compiled ones, for every schema and body', () => {
  const bodies = corpus();
  assert.ok(bodies.length > 200, `only ${bodies.length} bodies`);
  let failing = 0;
  for (const id of compiled.ids) {
    assert.equal(generated.get(id).schema, compiled.get(id).schema, `${id}: the validator carries its schema`);
    const request = /-request(\.strict)?\.json$/.test(id);
    for (const body of bodies) {
      const expected = compiled.check(id, body);
      failing += expected.length ? 1 : 0;
      assert.equal(generated.check(id, body), expected, id);
      if (request) assert.equal(generated.checkFirst(id, body), compiled.checkFirst(id, body), `${id} (first error)`);
    }
  }
  assert.ok(failing > 1000, 'the corpus reaches the error paths');
});

test('the parts of schemas checked at run time are generated too: none is compiled on its first use', () => {
  const profiles = [{}, { fast: { ttft: 100 } }, { bad: { ttft: -1, maxRunning: 'x' } }, { x: 1 }, null];
  for (const id of Object.values(SUBSCHEMA_IDS)) {
    // A validator Ajv compiles carries its schema environment; the generated module's are plain functions.
    assert.not.ok('schemaEnv' in generated.get(id), `${id} is generated`);
    assert.ok('schemaEnv' in compiled.get(id));
    for (const body of profiles) assert.equal(generated.check(id, body), compiled.check(id, body), id);
  }
});

test('verbose error data survives generation: the schema and data validation.ts reads', () => {
  const [e] = generated.check(schemaId('chat-request.json'), {
    model: 'm',
    messages: [{ role: 'user', content: 'x' }],
    temperature: 9,
  });
  assert.is(e?.keyword, 'maximum');
  assert.is(e?.data, 9);
  assert.equal(
    e?.parentSchema,
    compiled.check(schemaId('chat-request.json'), {
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      temperature: 9,
    })[0]?.parentSchema,
  );
});

test('the module needs only Ajv runtime helpers and the formats it is handed', () => {
  const code = generateModule();
  const required = [...new Set([...code.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]))];
  assert.ok(
    required.every((r) => r!.startsWith('ajv/dist/runtime/')),
    required.join(', '),
  );
  assert.ok(code.includes('__formats["base64-image"]'));
  assert.is(code, readFileSync(file, 'utf8'), 'generation is deterministic');
});

test('a module generated from other schemas is not used: the registry compiles instead', () => {
  const stale = join(dir, 'stale.cjs');
  writeFileSync(stale, readFileSync(file, 'utf8').replace(/exports\.hash = "[0-9a-f]+"/, 'exports.hash = "0"'));
  const reg = new SchemaRegistry(SCHEMAS_DIR, stale);
  assert.not.ok(reg.generated);
  assert.is(
    reg.check(strictId(schemaId('voice-tts-request.json')), { ...VALID['voice.tts'], extra: 1 })[0]?.keyword,
    'additionalProperties',
  );
  assert.not.ok(new SchemaRegistry(SCHEMAS_DIR, join(dir, 'missing.cjs')).generated);
});

test('a schema that breaks the meta-schema, or a duplicate $id, fails the build', () => {
  const bad = mkdtempSync(join(tmpdir(), 'schemas-'));
  try {
    writeFileSync(join(bad, 'a.json'), JSON.stringify({ $id: schemaId('a.json'), type: 'nothing' }));
    assert.throws(() => generateModule(bad), /schema is invalid/);
    rmSync(join(bad, 'a.json'));
    writeFileSync(join(bad, 'a-request.json'), JSON.stringify({ $id: schemaId('a-request.json'), type: 'object' }));
    writeFileSync(
      join(bad, 'a-request.strict.json'),
      JSON.stringify({ $id: schemaId('a-request.strict.json'), type: 'object' }),
    );
    assert.throws(() => generateModule(bad), /duplicate \$id/);
    assert.throws(() => new SchemaRegistry(bad), /duplicate \$id/);
  } finally {
    rmSync(bad, { recursive: true, force: true });
  }
});

test.run();
