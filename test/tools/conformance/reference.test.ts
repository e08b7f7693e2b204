import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { onEveryPath, runJson } from './harness.js';
import { INDEPENDENT_FLAGS, startIndependent, type Plant } from './independent.js';

const test = suite('conformance: a lenient and a strict reading of the API document both pass the documented profile');

const LENIENT: Plant = { lenient: true };
const STRICT: Plant = { strict: true };

async function run(plant: Plant) {
  const server = await startIndependent(plant);
  try {
    return await runJson(server.url, INDEPENDENT_FLAGS, server.key);
  } finally {
    await server.close();
  }
}

// The lenient reading departs from every should case (it takes any voice string and any data-URI media type),
// so each warns; the strict one holds those shapes too, so none does.
for (const [name, plant, warnsOnEveryShould] of [
  ['lenient (only the must rules)', LENIENT, true],
  ['strict (refuses what the document is silent on)', STRICT, false],
] as const) {
  test(`${name}: no case of the documented profile fails; a warning only on a should case`, async () => {
    const { code, failed, report } = await run(plant);
    assert.equal(failed, []);
    assert.is(code, 0);
    assert.is(report.summary.inconclusive, 0);
    const warned = report.cases.filter((c) => c.verdict === 'warn').map((c) => c.id);
    const should = report.cases.filter((c) => c.level === 'should').map((c) => c.id);
    assert.ok(should.length > 0);
    assert.equal(warned, warnsOnEveryShould ? should : []);
  });
}

test('the strict reading refuses what the document is silent on, and takes the valid requests', async () => {
  const server = await startIndependent(STRICT);
  const post = async (path: string, body: object) =>
    (
      await fetch(server.url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).status;
  const chat = { model: 'indie-chat', messages: [{ role: 'user', content: 'hi' }] };
  const png = Buffer.from('89504e470d0a1a0a0000000d', 'hex').toString('base64');
  try {
    assert.is(await post('/text-provider/chat/completions', chat), 200);
    assert.is(await post('/text-provider/chat/completions', { ...chat, user: 'x' }), 400);
    assert.is(await post('/text-provider/chat/completions', { ...chat, model: 'other-chat' }), 400);
    assert.is(await post('/voice-provider/tts', { text: 'hi', voice_id: 'nova' }), 200);
    assert.is(await post('/voice-provider/tts', { text: 'hi', voice_id: 'Nova Voice' }), 400);
    assert.is(await post('/cloud-provider/speech', { text: 'hi', voice: 'en-GB-IndieNeural' }), 200);
    assert.is(await post('/cloud-provider/speech', { text: 'hi', voice: 'IndieNeural' }), 400);
    assert.is(await post('/image-provider/image-edit', { prompt: 'p', image: `data:image/png;base64,${png}` }), 200);
    assert.is(await post('/image-provider/image-edit', { prompt: 'p', image: `data:text/plain;base64,${png}` }), 400);
  } finally {
    await server.close();
  }
});

// One defect at a time in the lenient reading: each is caught by a case of its own.
const plants: [string, Plant, string[]][] = [
  [
    'compares the key by prefix',
    { prefixKey: true },
    ['key-appended', 'key-prefix', 'key-repeated', 'key-truncated'].flatMap((n) => [
      `auth.near-miss.${n}.chat`,
      `auth.near-miss.${n}.me`,
    ]),
  ],
  [
    'clamps temperature instead of refusing it',
    { clampTemperature: true },
    onEveryPath(['chat.temperature.above-maximum', 'chat.temperature.below-minimum']),
  ],
  ['fills a missing image prompt in', { fillPrompt: true }, ['images.prompt.missing', 'images.prompt.wrong-type-null']],
  [
    'reads a numeric string duration as a number',
    { coerceDuration: true },
    onEveryPath(['video.duration.wrong-type-string-form']),
  ],
];

for (const [name, plant, expected] of plants) {
  test(`lenient, planted: ${name} -> exit 1, exactly ${expected.join(', ')}`, async () => {
    const { code, failed } = await run({ ...LENIENT, ...plant });
    assert.equal(failed, expected);
    assert.is(code, 1);
  });
}

test.run();
