import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  brokenServer,
  closeSharedMock,
  runJson,
  type Defect,
  type JsonReport,
  type ProxiedRequest,
} from './harness.js';

const test = suite('conformance: defects only the full profile sees (wire shapes, streams, media)');

test.after(closeSharedMock);

async function fullRun(
  defect: Defect,
  only: string,
  extra: string[] = [],
): Promise<{ code: number; failed: string[]; report: JsonReport }> {
  const server = await brokenServer(defect);
  try {
    return await runJson(server.url, ['--profile', 'full', '--only', only, ...extra]);
  } finally {
    await server.close();
  }
}

const failureOf = (report: JsonReport, id: string) =>
  report.cases
    .find((c) => c.id === id)!
    .failures.map((f) => `${f.check}: ${f.actual}`)
    .join(' | ');
const isStream = (headers: Record<string, unknown>) => /event-stream/.test(String(headers['content-type']));

test('a buffering proxy (the stream arrives in one piece) fails chat.stream on incremental delivery', async () => {
  const { code, failed, report } = await fullRun({ bufferStreams: true, response: () => {} }, 'chat.completions');
  // chat.stream.usage asks for one token: its role, token and finish chunks arriving together after a
  // while is what a correct service's model sends too, so it is not judged on its delivery.
  assert.equal(failed, ['chat.stop.stream', 'chat.stream']);
  assert.match(failureOf(report, 'chat.stream'), /one read/);
  assert.is(code, 1);
});

test('a second data: [DONE] fails chat.stream on the grammar', async () => {
  const { failed, report } = await fullRun(
    {
      bufferStreams: true,
      response: (res) =>
        void (isStream(res.headers) && (res.body = Buffer.concat([res.body, Buffer.from('data: [DONE]\n\n')]))),
    },
    'chat.stream',
  );
  assert.equal(failed, ['chat.stream', 'chat.stream.usage']);
  assert.match(failureOf(report, 'chat.stream'), /exactly one 'data: \[DONE\]', found 2/);
});

test('a stream without the role in its first chunk and two finish_reasons fails chat.stream', async () => {
  const { failed, report } = await fullRun(
    {
      bufferStreams: true,
      response: (res) =>
        void (
          isStream(res.headers) &&
          (res.body = Buffer.from(
            res.body
              .toString()
              .replace('"role":"assistant",', '')
              .replace(/"finish_reason":null/g, '"finish_reason":"stop"'),
          ))
        ),
    },
    'chat.stream',
  );
  assert.equal(failed, ['chat.stream', 'chat.stream.usage']);
  assert.match(failureOf(report, 'chat.stream'), /role/);
  assert.match(failureOf(report, 'chat.stream'), /finish_reason/);
});

test('plain-text error bodies fail every error case of the operation on the envelope, and nothing else', async () => {
  const { failed, report } = await fullRun(
    {
      response: (res) =>
        void (
          res.status >= 400 && ((res.body = Buffer.from('Bad Request')), (res.headers['content-type'] = 'text/plain'))
        ),
    },
    'me',
    ['--fault-headers', 'on'],
  );
  const errors = report.cases
    .filter((c) => c.expected.status >= 400 && c.verdict !== 'not-applicable')
    .map((c) => c.id)
    .sort();
  assert.equal(failed, errors);
  assert.ok(errors.includes('auth.missing.me') && errors.includes('fault.500.me'));
  assert.match(failureOf(report, 'auth.missing.me'), /error-envelope/);
});

/** Every 400 of the operation answered with its error's param replaced. */
const param400 = (param: (was: unknown) => unknown): Defect => ({
  response: (res) => {
    if (res.status !== 400) return;
    const answer = JSON.parse(res.body.toString()) as { error: { param: unknown } };
    answer.error.param = param(answer.error.param);
    res.body = Buffer.from(JSON.stringify(answer));
  },
});
const withCheck = (report: JsonReport, check: string) =>
  report.cases.filter((c) => c.expected.checks.includes(check)).map((c) => c.id);

test('400s whose error names no field (param null) fail every case that breaks one field, and nothing else', async () => {
  const { failed, report } = await fullRun(
    param400(() => null),
    'voice.tts',
  );
  const named = withCheck(report, 'error-param');
  // Generated cases, and a hand-written one that names its field.
  assert.ok(
    named.includes('tts.text.above-max-length') &&
      named.includes('tts.voice_settings.stability.wrong-type') &&
      named.includes('tts.voice_id.unknown'),
    named.join(),
  );
  assert.not.ok(named.includes('tts.body.malformed'));
  assert.equal(failed, named.sort());
  assert.match(failureOf(report, 'tts.text.above-max-length'), /^error-param: param null: /);
});

test('400s that name another field fail, and those that name the field or the member it belongs to pass', async () => {
  // Always "text": right for the cases on text; voice_settings.stability named as "voice_settings" passes too.
  const { failed, report } = await fullRun(
    param400((was) => (String(was).startsWith('voice_settings') ? 'voice_settings' : 'text')),
    'voice.tts',
  );
  const named = withCheck(report, 'error-param');
  const wrong = named.filter((id) => !/^tts\.(text|voice_settings)\./.test(id));
  assert.ok(wrong.includes('tts.voice_id.missing'), wrong.join());
  assert.equal(failed, wrong.sort());
  assert.match(failureOf(report, 'tts.voice_id.missing'), /^error-param: param "text"/);
});

test('a gateway that takes only the exact Content-Type application/json fails the charset case, and nothing else', async () => {
  const response: Defect['response'] = (res, req) => {
    const type = req.headers['content-type'];
    if (type === undefined || type === 'application/json') return;
    res.status = 415;
    res.headers = { 'content-type': 'application/json', 'x-request-id': 'req_refused' };
    res.body = Buffer.from(
      JSON.stringify({
        error: { message: 'Unsupported media type', type: 'invalid_request_error', param: null, code: null },
      }),
    );
  };
  const { failed, report } = await fullRun({ response }, 'chat.completions');
  assert.equal(failed, ['chat.content-type.charset']);
  assert.match(failureOf(report, 'chat.content-type.charset'), /^status: status 415/);
});

test('a 401 without WWW-Authenticate fails the auth cases only', async () => {
  const { failed } = await fullRun({ response: (res) => void delete res.headers['www-authenticate'] }, 'voice.tts');
  assert.equal(failed, [
    'auth.basic.tts',
    'auth.empty.tts',
    'auth.missing-bad-json.tts',
    'auth.missing-invalid-body.tts',
    'auth.missing.tts',
    'auth.unknown.tts',
  ]);
});

test('a 429 without retry-after fails the rate-limit fault cases', async () => {
  const { failed } = await fullRun({ response: (res) => void delete res.headers['retry-after'] }, 'fault');
  assert.equal(failed, [
    'fault.429.chat',
    'fault.429.edit',
    'fault.429.images',
    'fault.429.me',
    'fault.429.speech',
    'fault.429.tts',
    'fault.429.video',
  ]);
});

test('responses without x-request-id fail every case', async () => {
  const { failed, report } = await fullRun({ response: (res) => void delete res.headers['x-request-id'] }, 'me');
  assert.equal(failed, report.cases.map((c) => c.id).sort());
});

test('a chat completion without choices fails the success schema of the non-streamed 200 cases', async () => {
  const { failed, report } = await fullRun(
    {
      response: (res, req) =>
        void (
          res.status === 200 &&
          req.path.endsWith('/chat/completions') &&
          (res.body = Buffer.from(JSON.stringify({ ...JSON.parse(res.body.toString()), choices: undefined })))
        ),
    },
    'chat.minimal,chat.maximal,chat.temperature',
  );
  assert.equal(failed, [
    'chat.maximal',
    'chat.minimal',
    'chat.temperature.at-maximum',
    'chat.temperature.at-minimum',
    'chat.temperature.fraction',
  ]);
  assert.match(failureOf(report, 'chat.minimal'), /success-schema: .*choices/);
});

// The chat 200 cases the usage check reads: the non-streamed ones of the selection, and the stream that asks for its
// usage.
const USAGE_CASES = 'chat.minimal,chat.maximal,chat.temperature,chat.stream';
const CHAT_200 = [
  'chat.maximal',
  'chat.minimal',
  'chat.temperature.at-maximum',
  'chat.temperature.at-minimum',
  'chat.temperature.fraction',
];

test('a gateway that drops max_tokens on its way to the model fails the usage check of every chat 200 that reports usage', async () => {
  // Every case caps the answer at max_tokens 1; without the cap the model writes its whole reply, and its usage says
  // so.
  const { failed, report } = await fullRun(
    { request: (r) => void (r.path.endsWith('/chat/completions') && r.json && delete r.json.max_tokens) },
    USAGE_CASES,
  );
  assert.equal(failed, [...CHAT_200, 'chat.stream.usage'].sort());
  assert.match(
    failureOf(report, 'chat.minimal'),
    /^usage: completion_tokens \d+ is over the request's max_tokens of 1$/,
  );
  assert.match(
    failureOf(report, 'chat.stream.usage'),
    /^usage: completion_tokens \d+ is over the request's max_tokens of 1$/,
  );
});

test('usage whose total is not the sum of its parts fails the usage check', async () => {
  // Each non-streamed chat answer's total_tokens made its completion_tokens alone.
  const response: Defect['response'] = (res, req) => {
    if (res.status !== 200 || !req.path.endsWith('/chat/completions') || isStream(res.headers)) return;
    const answer = JSON.parse(res.body.toString()) as { usage: Record<string, number> };
    answer.usage.total_tokens = answer.usage.completion_tokens!;
    res.body = Buffer.from(JSON.stringify(answer));
  };
  const { failed, report } = await fullRun({ response }, USAGE_CASES);
  assert.equal(failed, CHAT_200);
  assert.match(
    failureOf(report, 'chat.maximal'),
    /^usage: total_tokens 1 is not prompt_tokens \d+ \+ completion_tokens 1$/,
  );
});

test('a gateway that drops stream_options fails the stream that asked for its usage, and nothing else', async () => {
  const { failed, report } = await fullRun(
    { request: (r) => void (r.json && delete r.json.stream_options) },
    USAGE_CASES,
  );
  assert.equal(failed, ['chat.stream.usage']);
  assert.is(
    failureOf(report, 'chat.stream.usage'),
    'usage: no chunk carries usage, though the request set stream_options.include_usage',
  );
});

// The chat 200 cases whose requests set stop: chat.maximal (stop "\n", one token) and the two that ask for "banana"
// with the
// stop "anana"; not the generated cases of the stop field's type, which are 400s.
const STOP_CASES = 'chat.maximal,chat.stop';
const stopRun = (defect: Defect) => fullRun(defect, STOP_CASES, ['--skip', 'chat.stop.*wrong-type*']);

test('a gateway that drops stop on its way to the model fails the stop check of the cases whose reply runs through it', async () => {
  const { failed, report } = await stopRun({ request: (r) => void (r.json && delete r.json.stop) });
  assert.equal(failed, ['chat.stop', 'chat.stop.stream']);
  assert.match(
    failureOf(report, 'chat.stop'),
    /^stop: choice 0's content holds the stop sequence "anana" at character \d+: /,
  );
  assert.match(failureOf(report, 'chat.stop.stream'), /^stop: choice 0's content holds the stop sequence "anana"/);
});

test('a gateway that honours stop on one path only fails the case of the other', async () => {
  const { failed } = await stopRun({ request: (r) => void (r.json?.stream === true && delete r.json.stop) });
  assert.equal(failed, ['chat.stop.stream']);
});

test('a reply that ends with the stop sequence it stopped at fails the stop check', async () => {
  // Cut after the sequence instead of before it: the content keeps it.
  const response: Defect['response'] = (res, req) => {
    const stop = req.json?.stop as string[] | undefined;
    if (res.status !== 200 || !stop?.length || isStream(res.headers)) return;
    const answer = JSON.parse(res.body.toString()) as { choices: { message: { content: string } }[] };
    answer.choices[0]!.message.content += stop[0];
    res.body = Buffer.from(JSON.stringify(answer));
  };
  const { failed, report } = await stopRun({ response });
  assert.equal(failed, ['chat.maximal', 'chat.stop']);
  assert.match(failureOf(report, 'chat.maximal'), /^stop: choice 0's content holds the stop sequence "\\n"/);
});

test('a gateway that compares the scheme case-sensitively (refusing bearer) fails the lowercase case, and nothing else', async () => {
  const { failed, report } = await fullRun(
    {
      request: (r) =>
        void (/^bearer /.test(r.headers.authorization ?? '') && (r.headers.authorization = 'Basic refused')),
    },
    'me',
  );
  assert.equal(failed, ['me.scheme-lowercase']);
  assert.match(failureOf(report, 'me.scheme-lowercase'), /^status: status 401/);
});

test('a server that reads the body before the key (400 for a bad body without one) fails the key-first cases, and nothing else', async () => {
  // As a body parser mounted ahead of the auth check: a body it refuses is answered before the key is looked at.
  const keyless = (r: ProxiedRequest) =>
    !r.headers.authorization && (r.json === undefined ? r.raw.length > 0 : Object.keys(r.json).length === 0);
  const { failed, report } = await fullRun(
    { request: (r) => void (keyless(r) && (r.headers.authorization = 'Bearer sk-mock-default')) },
    'auth',
  );
  const keyFirst = report.cases.filter((c) => /^auth\.missing-(bad-json|invalid-body)\./.test(c.id)).map((c) => c.id);
  assert.is(keyFirst.length, 12, 'two on each of the six operations that take a body');
  assert.equal(failed, keyFirst.sort());
  assert.match(failureOf(report, 'auth.missing-bad-json.chat'), /^status: status 400 /);
});

test('a gateway that drops seed fails the cases that set one on the seed check, and one that answers its own seed too', async () => {
  // The edit's seed cases and the maximal video (seed 42): the answer then echoes a seed of the server's choosing.
  // The valid cases only: a gateway that drops seed takes any value of it, so the invalid ones fail on their status.
  const validOnly = ['--skip', '*wrong-type*,*not-integer*,*fraction*,*below*,*above*'];
  const dropped = await fullRun(
    { request: (r) => void (r.json && delete r.json.seed) },
    'edit.seed,video.maximal',
    validOnly,
  );
  assert.equal(dropped.failed, ['edit.seed.at-maximum', 'edit.seed.at-minimum', 'video.maximal']);
  assert.match(failureOf(dropped.report, 'video.maximal'), /^seed: \d+: /);
  // A server that uses the seed but answers another (off by one) fails the same way; one that echoes it passes.
  const response: Defect['response'] = (res, req) => {
    if (res.status !== 200 || !req.path.endsWith('/image-edit')) return;
    const answer = JSON.parse(res.body.toString()) as { seed: number };
    answer.seed += 1;
    res.body = Buffer.from(JSON.stringify(answer));
  };
  const offByOne = await fullRun({ response }, 'edit.seed,video.maximal', validOnly);
  assert.equal(offByOne.failed, ['edit.seed.at-maximum', 'edit.seed.at-minimum']);
});

test('images of the wrong size fail the size cases on the PNG check', async () => {
  const { failed, report } = await fullRun(
    {
      response: (res) =>
        void (res.body = Buffer.from(res.body.toString('latin1').replace(/\/1792x1024\//g, '/1024x1024/'), 'latin1')),
    },
    'images.size',
  );
  assert.equal(failed, ['images.size.enum-1792x1024']);
  assert.match(failureOf(report, 'images.size.enum-1792x1024'), /png-size: a PNG of 1024x1024/);
});

test('a gateway that drops a valid response_format fails the case that asks for b64_json on the PNG check', async () => {
  // The model then answers in its default form (a url for the run's image model), where the client reads b64_json;
  // nor is the per-model rule applied (gpt-image-1 takes no response_format).
  const drop = (r: ProxiedRequest) =>
    r.path.endsWith('/images/generations') &&
    ['url', 'b64_json'].includes(r.json?.response_format as string) &&
    delete r.json!.response_format;
  const { failed, report } = await fullRun({ request: (r) => void drop(r) }, 'images.generate');
  assert.equal(failed, ['images.model-limit.response_format-gpt-image-1', 'images.response_format.enum-b64_json']);
  assert.match(failureOf(report, 'images.response_format.enum-b64_json'), /^png-size: an entry with url instead$/);
});

test('a video shorter than asked fails the 16-second case on the MP4 check', async () => {
  const { failed, report } = await fullRun(
    {
      response: (res) =>
        void (res.body = Buffer.from(res.body.toString('latin1').replace(/\/16\/(\d+)\.mp4/g, '/8/$1.mp4'), 'latin1')),
    },
    'video.duration',
  );
  assert.equal(failed, ['video.duration.enum-16']);
  assert.match(failureOf(report, 'video.duration.enum-16'), /mp4: 8\.00 s long/);
});

test('undecodable MP3 bytes fail every successful TTS case on the audio check', async () => {
  const { failed, report } = await fullRun(
    { response: (res) => void (res.headers['content-type'] === 'audio/mpeg' && (res.body = Buffer.alloc(512, 7))) },
    'voice.tts',
  );
  const ok = report.cases
    .filter((c) => c.expected.status === 200)
    .map((c) => c.id)
    .sort();
  assert.ok(ok.length >= 5);
  assert.equal(failed, ok);
  assert.match(failureOf(report, 'tts.minimal'), /audio/);
});

test.run();
