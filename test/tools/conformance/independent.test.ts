import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { NEAR_MISSES, nearMissCredential } from '../../../src/tools/conformance/credentials.js';
import { onEveryPath, runJson } from './harness.js';
import { INDEPENDENT_FLAGS, startIndependent, type Plant } from './independent.js';

const test = suite('conformance: an independent implementation of the API document (other bodies, models, key)');

async function run(plant: Plant = {}) {
  const server = await startIndependent(plant);
  try {
    return await runJson(server.url, INDEPENDENT_FLAGS, server.key);
  } finally {
    await server.close();
  }
}

test('a correct implementation with different bodies passes the documented profile: no false alarm', async () => {
  const { code, failed, report } = await run();
  assert.equal(failed, []);
  assert.is(code, 0);
  assert.is(report.summary.inconclusive, 0);
  assert.is(report.summary.notApplicable, 0);
  assert.is(report.summary.passed, report.summary.total);
});

const plants: [string, Plant, string[]][] = [
  [
    'accepts the Basic scheme',
    { acceptBasic: true },
    [
      'auth.basic.chat',
      'auth.basic.edit',
      'auth.basic.images',
      'auth.basic.me',
      'auth.basic.speech',
      'auth.basic.tts',
      'auth.basic.video',
    ],
  ],
  [
    'answers GET /v1/me without a key',
    { meWithoutKey: true },
    // So it also serves the near misses that carry the key outside the Authorization header (x-api-key, the query, a
    // cookie).
    [
      'auth.missing.me',
      ...NEAR_MISSES.filter((n) => nearMissCredential(n.id, 'any-key-0123')?.authorization === undefined).map(
        (n) => `auth.near-miss.${n.id}.me`,
      ),
    ].sort(),
  ],
  ['accepts temperature up to 3', { temperatureMax: 3 }, onEveryPath(['chat.temperature.above-maximum'])],
  [
    'accepts any video duration from a list with 5 in it',
    { durations: [4, 5, 8, 16] },
    onEveryPath(['video.duration.not-in-enum']),
  ],
  [
    'does not require image_url for image_to_video',
    { imageUrlOptional: true },
    ['video.image_to_video.without-image_url'],
  ],
  ['ignores the n limit', { ignoreN: true }, ['images.n.above-limit']],
  [
    'does not check pitch',
    { pitchUnchecked: true },
    onEveryPath(['speech.pitch.above-maximum', 'speech.pitch.below-minimum']),
  ],
  ['allows 2600 characters of TTS text', { textMax: 2600 }, ['tts.text.above-max-length']],
  ['rejects the data-URI image', { dataUriRejected: true }, ['edit.image.data-uri']],
];

for (const [name, plant, expected] of plants) {
  test(`planted: ${name} -> exit 1, exactly ${expected.join(', ')}`, async () => {
    const { code, failed } = await run(plant);
    assert.equal(failed, expected);
    assert.is(code, 1);
  });
}

test('planted: 422 for invalid parameters -> every must 400 case fails and names its rule, every should one warns', async () => {
  const { code, report } = await run({ invalidStatus: 422 });
  const failed = report.cases.filter((c) => c.verdict === 'fail');
  assert.ok(failed.length > 50);
  assert.ok(failed.every((c) => c.expected.status === 400 && c.failures[0]!.actual.startsWith('status 422')));
  assert.is(failed.length, report.cases.filter((c) => c.expected.status === 400 && c.level === 'must').length);
  const warned = report.cases.filter((c) => c.verdict === 'warn');
  assert.ok(
    warned.length > 0 && warned.every((c) => c.level === 'should' && c.failures[0]!.actual.startsWith('status 422')),
  );
  assert.is(warned.length, report.cases.filter((c) => c.expected.status === 400 && c.level === 'should').length);
  assert.is(code, 1);
});

test.run();
