// No configured key or admin token comes back whole in any response, header or body, whichever channel
// echoes what the client sent: error messages (model, voice, a path, a header value, a JSON parse error),
// the request id, the Host of media links, the quoted prompt of a reply.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { maskKey } from '../../src/domain/keys.js';
import type { RunningMock } from '../../src/server/server.js';
import {
  pathOf,
  request,
  tinyPng,
  useMock,
  withMock,
  wholeResponse,
  type ReqOptions,
  type Res,
} from '../support/index.js';

const KEY = 'sk-live-0123456789abcdefSECRET';
const QUOTED = 'k"ey\\with-quote-0123';
const SHORT = 'abcd1234';
const ADMIN = 'admin-token-5f3c9a7e11';
const SECRETS = [KEY, QUOTED, SHORT, ADMIN];
const CONFIG = { keys: [{ key: KEY, label: 'live' }, { key: QUOTED }, { key: SHORT }], adminToken: ADMIN };

const mock = useMock(test, CONFIG);

const CHAT = pathOf('chat.completions');
const IMAGES = pathOf('images.generate');
const messages = [{ role: 'user', content: 'hi' }];

/** One echo channel: a request that carries the secret `s` where the server may quote it. */
type Channel = readonly [name: string, send: (url: string, s: string) => Promise<Res>];

const call = (url: string, path: string, opts: ReqOptions = {}) => request(url, path, { key: KEY, ...opts });
const postJson = (url: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(url, path, { method: 'POST', body, headers });
const admin = (url: string, path: string, opts: ReqOptions = {}) => request(url, path, { key: ADMIN, ...opts });

const CHANNELS: readonly Channel[] = [
  ['chat model', (u, s) => postJson(u, CHAT, { model: s, messages })],
  ['chat model, embedded', (u, s) => postJson(u, CHAT, { model: `gpt-4o ${s}`, messages })],
  ['images model', (u, s) => postJson(u, IMAGES, { model: s, prompt: 'p' })],
  ['images size (an enum)', (u, s) => postJson(u, IMAGES, { model: 'dall-e-3', prompt: 'p', size: s })],
  ['video model', (u, s) => postJson(u, pathOf('video.generate'), { model: s, mode: 'text_to_video', prompt: 'p' })],
  ['tts voice_id', (u, s) => postJson(u, pathOf('voice.tts'), { text: 'hi', voice_id: s })],
  ['tts model_id', (u, s) => postJson(u, pathOf('voice.tts'), { text: 'hi', voice_id: 'rachel', model_id: s })],
  ['cloud speech voice', (u, s) => postJson(u, pathOf('cloud.speech'), { text: 'hi', voice: s })],
  [
    'cloud speech voice in SSML',
    (u, s) =>
      postJson(u, pathOf('cloud.speech'), {
        text: `<speak><voice name="${s}">hi</voice></speak>`,
        voice: 'en-US-JennyNeural',
      }),
  ],
  [
    'X-Microsoft-OutputFormat',
    (u, s) =>
      postJson(
        u,
        pathOf('cloud.speech'),
        { text: 'hi', voice: 'en-US-JennyNeural' },
        { 'x-microsoft-outputformat': s },
      ),
  ],
  ['X-Mock-Fault directive', (u, s) => postJson(u, CHAT, { model: 'gpt-4o', messages }, { 'x-mock-fault': s })],
  [
    'X-Mock-Fault status',
    (u, s) => postJson(u, CHAT, { model: 'gpt-4o', messages }, { 'x-mock-fault': `status=${s}` }),
  ],
  ['X-Mock-Fault delay', (u, s) => postJson(u, CHAT, { model: 'gpt-4o', messages }, { 'x-mock-fault': `delay=${s}` })],
  ['Prefer code', (u, s) => postJson(u, CHAT, { model: 'gpt-4o', messages }, { prefer: `code=${s}` })],
  ['X-Mock-Pacing', (u, s) => postJson(u, CHAT, { model: 'gpt-4o', messages, stream: true }, { 'x-mock-pacing': s })],
  ['X-Mock-Reply-Rule', (u, s) => postJson(u, CHAT, { model: 'gpt-4o', messages }, { 'x-mock-reply-rule': s })],
  ['Content-Type', (u, s) => call(u, CHAT, { method: 'POST', raw: '{}', headers: { 'content-type': `text/${s}` } })],
  ['Content-Encoding', (u, s) => call(u, CHAT, { method: 'POST', raw: '{}', headers: { 'content-encoding': s } })],
  ['a body that is not JSON', (u, s) => call(u, CHAT, { method: 'POST', raw: s })],
  ['a JSON body cut short', (u, s) => call(u, CHAT, { method: 'POST', raw: `{"model": ${JSON.stringify(s)} ${s}` })],
  ['video task id', (u, s) => call(u, `/video-provider/generate/${encodeURIComponent(s)}`)],
  ['an unknown path', (u, s) => call(u, `/${encodeURIComponent(s)}`)],
  ['an unknown path under /v1', (u, s) => call(u, `/v1/text-provider/${encodeURIComponent(s)}`)],
  [
    'an unknown path, percent-encoded',
    (u, s) => call(u, `/${[...s].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')}`),
  ],
  [
    'a wrong method on a path with a parameter',
    (u, s) => call(u, `/video-provider/generate/${encodeURIComponent(s)}`, { method: 'PUT' }),
  ],
  ['X-Request-Id', (u, s) => call(u, '/v1/me', { headers: { 'x-request-id': s } })],
  [
    'X-Request-Id on an early 401',
    (u, s) => request(u, '/v1/me', { key: 'wrong-key', headers: { 'x-request-id': s } }),
  ],
  ['Host of an image link', (u, s) => postJson(u, IMAGES, { model: 'dall-e-3', prompt: 'p' }, { host: s })],
  [
    'Host of a video link',
    (u, s) =>
      postJson(u, pathOf('video.generate'), { model: 'gen3a_turbo', mode: 'text_to_video', prompt: 'p' }, { host: s }),
  ],
  [
    'a quoted prompt: the default chat reply',
    (u, s) => postJson(u, CHAT, { model: 'gpt-4o', messages: [{ role: 'user', content: s }] }),
  ],
  [
    'a quoted prompt: the default chat reply, streamed',
    (u, s) => postJson(u, CHAT, { model: 'gpt-4o', messages: [{ role: 'user', content: s }], stream: true }),
  ],
  ['a quoted prompt: the revised image prompt', (u, s) => postJson(u, IMAGES, { model: 'dall-e-3', prompt: s })],
  [
    'an image edit prompt',
    (u, s) => postJson(u, pathOf('images.edit'), { prompt: s, image: tinyPng(2, 2).toString('base64') }),
  ],
  [
    'an ignored field named like a key (x-mock-ignored-fields)',
    (u, s) => postJson(u, CHAT, { model: 'gpt-4o', messages, [s]: 1 }),
  ],
  ['an admin rule id to delete', (u, s) => admin(u, `/__admin/faults/${encodeURIComponent(s)}`, { method: 'DELETE' })],
  [
    'an admin rule that is not valid',
    (u, s) => admin(u, '/__admin/faults', { method: 'POST', body: { id: `${s} x`, fault: { status: 503 } } }),
  ],
  [
    'an admin rule matching a model',
    (u, s) => admin(u, '/__admin/faults', { method: 'POST', body: { match: { model: 1 }, fault: { status: s } } }),
  ],
];

const jsonEscaped = (s: string) => JSON.stringify(s).slice(1, -1);

/** The secret's forms a response could carry it in whole: as written, and as JSON writes it. */
const whole = (s: string) => [...new Set([s, jsonEscaped(s)])];

async function sendAll(
  m: RunningMock,
  channels: readonly Channel[],
): Promise<{ leaks: string[]; masked: Set<string> }> {
  const leaks: string[] = [];
  const masked = new Set<string>();
  for (const [name, send] of channels) {
    for (const s of SECRETS) {
      const res = await send(m.url, s);
      const text = wholeResponse(res);
      for (const form of whole(s))
        if (text.includes(form)) leaks.push(`${name} (${s}): ${res.status} ${text.slice(0, 400)}`);
      if (whole(maskKey(s)).some((form) => text.includes(form))) masked.add(name);
    }
  }
  return { leaks, masked };
}

test('every configured key and the admin token, through every echo channel: never whole in a header or a body', async () => {
  const { leaks, masked } = await sendAll(mock(), CHANNELS);
  assert.equal(leaks, [], `${leaks.length} leaks:\n${leaks.join('\n')}`);
  // The channels still say what was sent, with the secret masked: the test is not passing by silence.
  for (const name of [
    'chat model',
    'an ignored field named like a key (x-mock-ignored-fields)',
    'tts voice_id',
    'X-Mock-Fault directive',
    'video task id',
    'an unknown path, percent-encoded',
    'a quoted prompt: the default chat reply',
  ]) {
    assert.ok(masked.has(name), `${name} no longer quotes the masked secret`);
  }
});

test('with --strict, an unknown field named like a key is named masked in param and message', async () => {
  await withMock({ ...CONFIG, strict: true }, async (m) => {
    const channels: Channel[] = [
      ['an unknown field (strict)', (u, s) => postJson(u, CHAT, { model: 'gpt-4o', messages, [s]: 1 })],
    ];
    const { leaks, masked } = await sendAll(m, channels);
    assert.equal(leaks, [], leaks.join('\n'));
    assert.ok(masked.has('an unknown field (strict)'));
  });
});

test('the request id and the media host are replaced, not masked: a client never gets a secret back as an id or a link', async () => {
  const { url } = mock();
  const id = await call(url, '/v1/me', { headers: { 'x-request-id': `${ADMIN}-1` } });
  assert.match(String(id.headers['x-request-id']), /^req_[0-9a-f]{32}$/);
  const plain = await call(url, '/v1/me', { headers: { 'x-request-id': 'my-trace-1' } });
  assert.is(plain.headers['x-request-id'], 'my-trace-1');
  const link = await postJson(url, IMAGES, { model: 'dall-e-3', prompt: 'p' }, { host: SHORT });
  assert.is(link.status, 200, link.text);
  assert.match(link.json.data[0].url, /^http:\/\/127\.0\.0\.1:\d+\/media\/images\//);
});

test.run();
