import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isPaid } from '../../../src/verdict/cost.js';
import { notApplicable } from '../../../src/tools/conformance/run.js';
import { cachedSuite, fill, loadSuite, type SuiteValues } from '../../../src/tools/conformance/suite.js';
import { CONFORMANCE_DIR } from '../../../src/lib/paths.js';
import { SchemaRegistry } from '../../../src/contract/schemas.js';

const registry = new SchemaRegistry();
const theirs: SuiteValues = {
  chatModel: 'their-chat',
  imageModel: 'their-image',
  videoModel: 'their-video',
  voiceId: 'their-voice',
  cloudVoice: 'xx-XX-TheirNeural',
  ttsModel: 'their-tts',
  imageUrl: 'https://images.example/a.png',
};
const { cases } = loadSuite(registry, theirs);
const documented = cases.filter((c) => c.profile === 'documented');

test('the documented profile asserts only the statuses the API document lists: 200, 400, 401', () => {
  assert.equal([...new Set(documented.map((c) => c.expect.status))].sort(), [200, 400, 401]);
});

test('the documented profile names no model, voice or fault header of the mock: only the run values', () => {
  const text = JSON.stringify(documented.map((c) => c.request));
  for (const ours of [
    'gpt-4o',
    'dall-e-3',
    'gen3a_turbo',
    'rachel',
    'JennyNeural',
    'eleven_',
    'X-Mock-Fault',
    'Prefer',
  ])
    assert.not.ok(text.includes(ours), ours);
  assert.ok(text.includes('their-chat') && text.includes('xx-XX-TheirNeural'));
});

test('billable means a 200 on a paid operation, and every billable case has a cost', () => {
  for (const c of cases) {
    assert.is(c.billable, c.expect.status === 200 && isPaid(c.operation), c.id);
    if (c.billable)
      assert.ok(
        Object.values(c.cost).some((v) => v > 0),
        c.id,
      );
  }
  // A reply held to a stop sequence needs room to reach it (10 tokens), and the stream whose delivery is
  // judged needs tokens a model makes steps apart (16); every other paid chat case asks for one token.
  const chat = cases.filter((c) => c.billable && c.operation === 'chat.completions');
  assert.equal(
    chat.filter((c) => c.cost.tokens !== 1).map((c) => `${c.id} ${c.cost.tokens}`),
    ['chat.stream 16', 'chat.stop 10', 'chat.stop.stream 10'],
    'paid chat cases use max_tokens 1',
  );
  assert.ok(
    cases
      .filter((c) => c.billable && c.operation === 'video.generate')
      .every((c) => c.cost.videoSeconds === 4 || c.tags.includes('enums')),
    'paid video cases use duration 4',
  );
});

test('every rule of the Limits table, the auth cases and the conditional image_url have documented cases', () => {
  const ids = new Set(documented.map((c) => c.id));
  const wanted = [
    'images.prompt.above-max-length',
    'images.prompt.at-max-length',
    'tts.text.above-max-length',
    'tts.text.at-max-length',
    'images.n.above-limit',
    'images.n.at-limit',
    'chat.temperature.above-maximum',
    'chat.temperature.below-minimum',
    'chat.temperature.at-maximum',
    'chat.temperature.at-minimum',
    'chat.top_p.above-maximum',
    'chat.top_p.below-minimum',
    'speech.rate.above-maximum',
    'speech.rate.below-minimum',
    'speech.pitch.above-maximum',
    'speech.pitch.below-minimum',
    'video.duration.not-in-enum',
    'video.duration.enum-8',
    'video.duration.enum-16',
    'video.image_to_video.without-image_url',
    'video.image_to_video.with-image_url',
    'edit.image.data-uri',
    ...['missing', 'basic', 'empty', 'unknown'].flatMap((a) =>
      ['chat', 'images', 'edit', 'video', 'tts', 'speech', 'me'].map((p) => `auth.${a}.${p}`),
    ),
  ];
  for (const id of wanted) assert.ok(ids.has(id), id);
});

test('every case has a one-line description and a rule', () => {
  for (const c of cases) {
    assert.ok(c.description && !c.description.includes('\n'), c.id);
    assert.ok(c.rule.length > 10, c.id);
  }
});

test('a valid response_format needs an image model that takes it: the catalogue says which, a model it does not list is taken at the schema', () => {
  const sends = cases.filter((c) => c.requires?.imageResponseFormat !== undefined);
  assert.equal(sends.map((c) => `${c.id} ${c.requires!.imageResponseFormat}`).sort(), [
    'images.response_format.enum-b64_json b64_json',
    'images.response_format.enum-url url',
  ]);
  const url = sends.find((c) => c.id.endsWith('enum-url'))!;
  const run = { unsupported: new Set<string>(), faultHeaders: true, imageModel: 'their-image' };
  assert.is(notApplicable(url, run), undefined);
  assert.is(notApplicable(url, { ...run, imageResponseFormats: ['url', 'b64_json'] }), undefined);
  assert.is(
    notApplicable(url, { ...run, imageResponseFormats: [] }),
    "the image model their-image does not take response_format (the mock's model catalogue, fixtures/models.json)",
  );
  assert.is(
    notApplicable(url, { ...run, imageResponseFormats: ['b64_json'] }),
    "the image model their-image takes response_format b64_json, not url (the mock's model catalogue, fixtures/models.json)",
  );
});

test("the catalogue's response_format rule has a case: gpt-image-1, which takes none, is sent b64_json, its own format, and must refuse it", () => {
  const refusals = cases.filter((c) => c.id.startsWith('images.model-limit.response_format'));
  assert.equal(
    refusals.map((c) => [c.id, c.request.body, c.expect.status, c.profile, c.billable]),
    [
      [
        'images.model-limit.response_format-gpt-image-1',
        { model: 'gpt-image-1', prompt: 'A red dot', size: '1024x1024', response_format: 'b64_json' },
        400,
        'full',
        false,
      ],
    ],
  );
  assert.match(refusals[0]!.rule, /model catalogue \(fixtures\/models\.json\)/);
});

test('fill: placeholders are replaced everywhere; an unknown one is an error', () => {
  assert.equal(fill({ a: ['{{x}}', 'say {{x}}'], b: 1 }, { x: 'y' }), { a: ['y', 'say y'], b: 1 });
  assert.throws(() => fill({ a: '{{nope}}' }, {}), /unknown placeholder \{\{nope\}\}/);
});

test('the loader rejects a malformed case file and a duplicate id', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cases-'));
  try {
    cpSync(CONFORMANCE_DIR, dir, { recursive: true });
    const me = JSON.parse(readFileSync(join(dir, 'me.json'), 'utf8')) as { cases: Record<string, unknown>[] };
    writeFileSync(join(dir, 'me.json'), JSON.stringify({ ...me, cases: [...me.cases, me.cases[0]] }));
    assert.throws(() => loadSuite(registry, theirs, dir), /duplicate case id me\.valid/);
    writeFileSync(join(dir, 'me.json'), JSON.stringify({ ...me, cases: [{ ...me.cases[0], expect: {} }] }));
    assert.throws(
      () => loadSuite(registry, theirs, dir),
      /conformance\/me\.json\/cases\/0\/expect: must have required property 'status'/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('cachedSuite: the same frozen suite for the same values and files; built again when either changes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cases-'));
  try {
    cpSync(CONFORMANCE_DIR, dir, { recursive: true });
    const first = cachedSuite(registry, theirs, dir);
    assert.equal(first.cases, loadSuite(registry, theirs, dir).cases);
    assert.ok(cachedSuite(registry, theirs, dir) === first, 'not built again');
    assert.ok(Object.isFrozen(first) && Object.isFrozen(first.cases[0]!.request), 'frozen');
    const other = cachedSuite(registry, { ...theirs, chatModel: 'another-chat' }, dir);
    assert.ok(other !== first && JSON.stringify(other.cases).includes('another-chat'), 'other values');
    const me = JSON.parse(readFileSync(join(dir, 'me.json'), 'utf8')) as { cases: { id: string }[] };
    writeFileSync(
      join(dir, 'me.json'),
      JSON.stringify({ ...me, cases: [...me.cases, { ...me.cases[0], id: 'me.again' }] }),
    );
    assert.ok(
      cachedSuite(registry, { ...theirs, chatModel: 'another-chat' }, dir).cases.some((c) => c.id === 'me.again'),
      'a changed case file is read again',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
