import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFORMANCE_DIR } from '../../../src/lib/paths.js';
import { NEAR_MISSES, nearMissCredential } from '../../../src/tools/conformance/credentials.js';
import { brokenServer, closeSharedMock, onEveryPath, runJson, sharedMock, type Defect } from './harness.js';

const test = suite('conformance: each planted defect fails exactly its cases (documented profile)');

test.after(closeSharedMock);

const OPS = ['chat', 'speech', 'edit', 'images', 'me', 'video', 'tts'];
const onEveryOperation = (name: string) => OPS.map((p) => `${name}.${p}`).sort();
const chat = (path: string) => path.endsWith('/chat/completions');
const bearer = (token: string) => `Bearer ${token}`;
// The near misses that carry the key outside the Authorization header (x-api-key, the query, a cookie), on the two
// operations they run on.
const keyElsewhere = NEAR_MISSES.filter(
  (n) => nearMissCredential(n.id, 'sk-mock-default')?.authorization === undefined,
).flatMap((n) => ['chat', 'me'].map((p) => `auth.near-miss.${n.id}.${p}`));

/** Runs the documented profile against a server with the defect and returns the failed ids and exit code. */
async function failuresWith(
  defect: Defect,
  extra: string[] = [],
): Promise<{ code: number; failed: string[]; all: Map<string, string> }> {
  const server = await brokenServer(defect);
  try {
    const { code, failed, verdicts } = await runJson(server.url, extra);
    return { code, failed, all: verdicts };
  } finally {
    await server.close();
  }
}

const plants: [string, Defect, string[]][] = [
  [
    'accepts temperature above 2 (clamps it)',
    {
      request: (r) =>
        void (
          chat(r.path) &&
          typeof r.json?.temperature === 'number' &&
          r.json.temperature > 2 &&
          (r.json.temperature = 2)
        ),
    },
    onEveryPath(['chat.temperature.above-maximum']),
  ],
  [
    'answers 200 without an Authorization header',
    { request: (r) => void (r.headers.authorization ??= bearer('sk-mock-default')) },
    [...onEveryOperation('auth.missing'), ...keyElsewhere].sort(),
  ],
  [
    'accepts the Basic scheme',
    {
      request: (r) =>
        void (
          r.headers.authorization?.startsWith('Basic ') &&
          (r.headers.authorization = bearer(r.headers.authorization.slice(6)))
        ),
    },
    onEveryOperation('auth.basic'),
  ],
  [
    'accepts an empty bearer token',
    {
      request: (r) =>
        void (
          /^Bearer\s*$/.test(r.headers.authorization ?? '') && (r.headers.authorization = bearer('sk-mock-default'))
        ),
    },
    onEveryOperation('auth.empty'),
  ],
  [
    'accepts any well-formed key',
    {
      request: (r) =>
        void (
          r.headers.authorization?.startsWith('Bearer sk-conformance') &&
          (r.headers.authorization = bearer('sk-mock-default'))
        ),
    },
    onEveryOperation('auth.unknown'),
  ],
  [
    'accepts image prompts over 1000 characters (truncates them)',
    {
      request: (r) =>
        void (
          r.path.endsWith('/images/generations') &&
          typeof r.json?.prompt === 'string' &&
          (r.json.prompt = r.json.prompt.slice(0, 1000))
        ),
    },
    ['images.prompt.above-max-length'],
  ],
  [
    'accepts n = 2 for DALL-E 3',
    { request: (r) => void (typeof r.json?.n === 'number' && r.json.n > 1 && (r.json.n = 1)) },
    ['images.n.above-limit'],
  ],
  [
    'accepts video durations other than 4, 8, 16',
    { request: (r) => void (r.json?.duration === 5 && (r.json.duration = 4)) },
    onEveryPath(['video.duration.not-in-enum']),
  ],
  [
    'does not require image_url for image_to_video',
    {
      request: (r) =>
        void (
          r.json?.mode === 'image_to_video' &&
          r.json.image_url === undefined &&
          (r.json.image_url = 'https://example.com/a.png')
        ),
    },
    ['video.image_to_video.without-image_url'],
  ],
  [
    'accepts speech rate outside -50..50 (clamps it)',
    {
      request: (r) =>
        void (typeof r.json?.rate === 'number' && (r.json.rate = Math.max(-50, Math.min(50, r.json.rate)))),
    },
    onEveryPath(['speech.rate.above-maximum', 'speech.rate.below-minimum']),
  ],
  [
    'accepts TTS text over 2500 characters (truncates it)',
    {
      request: (r) =>
        void (
          r.path.endsWith('/tts') &&
          typeof r.json?.text === 'string' &&
          (r.json.text = r.json.text.slice(0, 2500))
        ),
    },
    ['tts.text.above-max-length'],
  ],
  [
    'fills in missing chat messages',
    {
      request: (r) =>
        void (
          chat(r.path) &&
          r.json &&
          r.json.messages === undefined &&
          (r.json.messages = [{ role: 'user', content: 'hi' }])
        ),
    },
    onEveryPath(['chat.messages.missing']),
  ],
  [
    'rejects temperature 2 (an exclusive maximum)',
    { request: (r) => void (chat(r.path) && r.json?.temperature === 2 && (r.json.temperature = 3)) },
    ['chat.temperature.at-maximum'],
  ],
  // Defects a type check at the top level alone lets through.
  [
    'does not type-check stop items (turns them into strings)',
    {
      request: (r) =>
        void (
          chat(r.path) &&
          Array.isArray(r.json?.stop) &&
          (r.json.stop = r.json.stop.map((s) => (typeof s === 'string' ? s : JSON.stringify(s))))
        ),
    },
    onEveryPath(wrongTypes('chat.stop.0', ['', 'boolean', 'null', 'object', 'array'])),
  ],
  [
    'accepts message content of any type (turns it into a string)',
    {
      request: (r) =>
        void (
          chat(r.path) &&
          Array.isArray(r.json?.messages) &&
          r.json.messages.forEach(
            (m: { content?: unknown }) =>
              m &&
              typeof m === 'object' &&
              m.content !== undefined &&
              typeof m.content !== 'string' &&
              (m.content = JSON.stringify(m.content)),
          )
        ),
    },
    onEveryPath(wrongTypes('chat.messages.0.content', ['', 'boolean', 'null', 'object', 'array'])),
  ],
  [
    'coerces a numeric string temperature ("0.5") to a number',
    {
      request: (r) =>
        void (
          chat(r.path) &&
          typeof r.json?.temperature === 'string' &&
          /^\d+(\.\d+)?$/.test(r.json.temperature) &&
          (r.json.temperature = Number(r.json.temperature))
        ),
    },
    onEveryPath(['chat.temperature.wrong-type-string-form']),
  ],
  [
    'accepts any string as the image to edit (reads it as a blank image)',
    {
      request: (r) =>
        void (
          r.path.endsWith('/image-edit') &&
          typeof r.json?.image === 'string' &&
          r.json.image !== PNG &&
          r.json.image !== `data:image/png;base64,${PNG}` &&
          (r.json.image = PNG)
        ),
    },
    // A data URI of another media type is a should case: it warns (levels.test.ts), it does not fail.
    ['edit.image.bad-format', 'edit.image.data-uri-not-an-image', 'edit.image.not-an-image'],
  ],
  [
    'answers malformed JSON with 500 (the parser threw)',
    { response: (res, req) => void (req.json === undefined && isBrokenJson(req.raw) && (res.status = 500)) },
    ['malformed', 'truncated'].flatMap((kind) =>
      ['chat', 'speech', 'edit', 'images', 'video', 'tts'].map((p) => `${p}.body.${kind}`),
    ),
  ],
  [
    'answers a JSON body that is not an object as an empty request (200 with defaults)',
    {
      request: (r) =>
        void (
          r.json === undefined &&
          r.raw.length &&
          !isBrokenJson(r.raw) &&
          r.path.endsWith('/tts') &&
          (r.json = { text: 'Hi', voice_id: 'rachel' })
        ),
    },
    ['array', 'number', 'string', 'null', 'boolean'].map((kind) => `tts.body.${kind}`),
  ],
];

/** The ids of the wrong-type cases of a field, by kind ('' for the first). */
function wrongTypes(field: string, kinds: string[]): string[] {
  return kinds.map((k) => `${field}.wrong-type${k && `-${k}`}`);
}

function isBrokenJson(text: string): boolean {
  try {
    JSON.parse(text);
    return false;
  } catch {
    return text.length > 0;
  }
}

const PNG = (JSON.parse(readFileSync(join(CONFORMANCE_DIR, 'suite.json'), 'utf8')) as { values: { png: string } })
  .values.png;

for (const [name, defect, expected] of plants) {
  test(`${name} -> exit 1, fails ${expected.length === 1 ? expected[0] : `${expected.length} cases`}`, async () => {
    const { code, failed } = await failuresWith(defect);
    assert.equal(failed, [...expected].sort());
    assert.is(code, 1);
  });
}

test('answers 422 instead of 400 -> exactly the must cases expecting 400 fail, the should ones warn', async () => {
  const { code, failed, all } = await failuresWith({
    response: (res) => void (res.status === 400 && (res.status = 422)),
  });
  const { report } = await runJson((await sharedMock()).url);
  const expecting400 = (level: string) =>
    report.cases
      .filter((c) => c.expected.status === 400 && c.verdict !== 'not-applicable' && c.level === level)
      .map((c) => c.id)
      .sort();
  assert.ok(expecting400('must').length > 50);
  assert.equal(failed, expecting400('must'));
  assert.equal(
    [...all]
      .filter(([, v]) => v === 'warn')
      .map(([id]) => id)
      .sort(),
    expecting400('should'),
  );
  assert.is(code, 1);
  assert.is(all.get('chat.minimal'), 'pass');
});

test('different success bodies and error shapes -> the documented profile has no false alarm', async () => {
  const { code, failed } = await failuresWith({
    response: (res) => {
      const type = res.status === 200 ? 'application/json' : 'text/plain';
      res.body = Buffer.from(res.status === 200 ? '{"result":"ok","data":[]}' : `Error ${res.status}`);
      res.headers = { 'content-type': type };
    },
  });
  assert.equal(failed, []);
  assert.is(code, 0);
});

test.run();
