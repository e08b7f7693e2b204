import { encodePng, crc32 } from '../src/media/png.js';

/** The key every scenario presents (one of the mock's default keys; the baseline checks the same one). */
export const API_KEY = 'sk-mock-default';

/** One kind of request the benchmark sends, and the status it must get back. */
export interface Scenario {
  readonly name: string;
  readonly title: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
  readonly expect: number;
  /** True when the answer is a server-sent event stream (the baseline writes it event by event). */
  readonly stream?: boolean;
}

/** A pair of requests that differ only in the amount of work, for the linearity check. */
export interface Pair {
  readonly name: string;
  readonly unit: string;
  readonly small: Scenario;
  readonly large: Scenario;
  /** How many times more work the large request carries. */
  readonly workRatio: number;
}

const MiB = 1024 * 1024;

const post = (name: string, title: string, path: string, body: unknown, expect = 200, key = API_KEY): Scenario => ({
  name,
  title,
  method: 'POST',
  path,
  headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: Buffer.from(JSON.stringify(body)),
  expect,
});

const CHAT = '/v1/text-provider/chat/completions';
const chatBody = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Say this is a test' },
  ],
};

/** A deterministic text of exactly `n` characters (plain ASCII prose). */
export function text(n: number): string {
  const words = 'the quick brown fox jumps over the lazy dog while a mock server answers every request in time'.split(
    ' ',
  );
  let out = '';
  for (let i = 0; out.length < n; i++) out += (out ? ' ' : '') + words[i % words.length];
  return out.slice(0, n);
}

/** A conversation of `n` messages (alternating user and assistant) that ends with a user turn. */
export function conversation(n: number): { role: string; content: string }[] {
  return Array.from({ length: n }, (_, i) => {
    const last = i === n - 1;
    const role = (n - 1 - i) % 2 === 0 ? 'user' : 'assistant';
    return { role, content: last ? 'Say this is a test' : `Message ${i}: ${text(80)}` };
  });
}

/**
 * A 1024x1024 PNG padded to exactly `bytes` with a private ancillary chunk of pseudo-random data:
 * a valid image whose size in bytes can be chosen while its dimensions (and so the answer) stay the same.
 */
export function paddedPng(bytes: number): Buffer {
  const png = encodePng(1024, 1024, 7);
  const iendAt = png.length - 12;
  const padLength = bytes - png.length - 12;
  if (padLength < 0) throw new RangeError(`a padded PNG needs at least ${png.length + 12} bytes`);
  const chunk = Buffer.alloc(12 + padLength);
  chunk.writeUInt32BE(padLength, 0);
  chunk.write('bnCh', 4, 'latin1'); // lower-case first letter: ancillary, decoders skip it
  let x = 0x9e3779b9;
  for (let i = 8; i < 8 + padLength; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    chunk[i] = x & 0xff;
  }
  chunk.writeUInt32BE(crc32(chunk, 4, 8 + padLength), 8 + padLength);
  return Buffer.concat([png.subarray(0, iendAt), chunk, png.subarray(iendAt)]);
}

const editBody = (bytes: number) => ({ prompt: 'make the sky purple', image: paddedPng(bytes).toString('base64') });
const ttsBody = (chars: number) => ({ voice_id: 'rachel', model_id: 'eleven_multilingual_v2', text: text(chars) });
const chatOf = (n: number) => ({ model: 'gpt-4o-mini', messages: conversation(n) });

/** The load scenarios, in the order they run. */
export function loadScenarios(): Scenario[] {
  return [
    post('chat', 'chat completion (valid)', CHAT, chatBody),
    post(
      'chat-400',
      'chat completion (invalid, 400)',
      CHAT,
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 42 }] },
      400,
    ),
    post('chat-401', 'chat completion (bad key, 401)', CHAT, chatBody, 401, 'sk-not-a-key'),
    post('images', 'image generation', '/v1/text-provider/images/generations', {
      model: 'dall-e-3',
      prompt: 'a watercolour fox in a snowy forest',
      size: '1024x1024',
    }),
    post('tts', 'voice tts, 2,500 characters', '/v1/voice-provider/tts', ttsBody(2500)),
    {
      ...post('stream', 'streamed completion, 200 tokens', CHAT, {
        model: 'gpt-4o-mini',
        stream: true,
        max_tokens: 200,
        messages: [{ role: 'user', content: 'Please give me a long answer.' }],
      }),
      stream: true,
    },
    post('edit', 'image edit, 5 MiB image', '/v1/image-provider/image-edit', editBody(5 * MiB)),
  ];
}

/** The streamed request used for the many-concurrent-streams check. */
export const streamScenario = (): Scenario => loadScenarios().find((s) => s.name === 'stream')!;

/** GET /v1/me with the key: the cheapest request that goes through authentication. */
export const meScenario = (): Scenario => ({
  name: 'me',
  title: 'GET /v1/me',
  method: 'GET',
  path: '/v1/me',
  headers: { authorization: `Bearer ${API_KEY}` },
  expect: 200,
});

/** The linearity pairs: the same request with more work in it. */
export function pairs(): Pair[] {
  return [
    {
      name: 'edit',
      unit: 'MiB of image',
      small: post('edit-5', 'image edit 5 MiB', '/v1/image-provider/image-edit', editBody(5 * MiB)),
      large: post('edit-10', 'image edit 10 MiB', '/v1/image-provider/image-edit', editBody(10 * MiB)),
      workRatio: 2,
    },
    {
      name: 'chat',
      unit: 'messages',
      small: post('chat-10', 'chat, 10 messages', CHAT, chatOf(10)),
      large: post('chat-1000', 'chat, 1,000 messages', CHAT, chatOf(1000)),
      workRatio: 100,
    },
    {
      name: 'tts',
      unit: 'characters',
      small: post('tts-100', 'tts, 100 characters', '/v1/voice-provider/tts', ttsBody(100)),
      large: post('tts-2500', 'tts, 2,500 characters', '/v1/voice-provider/tts', ttsBody(2500)),
      workRatio: 25,
    },
  ];
}

/**
 * The paced-streams scenario's request: a streamed chat completion of `tokens` tokens, paced by the mock's
 * X-Mock-Pacing header (the first token after `ttftMs`, then `tps` a second).
 */
export function pacedScenario(plan: { tokens: number; tps: number; ttftMs: number }): Scenario {
  const s = post('streams-paced', `paced streams, ${plan.tokens} tokens at ${plan.tps} tps`, CHAT, {
    model: 'gpt-4o-mini',
    stream: true,
    max_tokens: plan.tokens,
    messages: [{ role: 'user', content: 'Please give me a long answer.' }],
  });
  return { ...s, headers: { ...s.headers, 'x-mock-pacing': `ttft=${plan.ttftMs}; tps=${plan.tps}` }, stream: true };
}
