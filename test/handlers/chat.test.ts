import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countChatPromptTokens, countTokens } from '../../src/text/tokenizer.js';
import { chatCompletions, chatIdOf, LONG_PROMPT_CHARS } from '../../src/handlers/chat.js';
import { tokensOf } from '../../src/domain/rateLimits/tokens.js';
import { digest, idFrom } from '../../src/lib/ids.js';
import type { RequestRecord } from '../../src/pipeline/requestContext.js';
import { eventsOf, type Reply } from '../../src/contract/reply.js';
import { planFor } from '../../src/pipeline/plan.js';
import { boundOperations } from '../../src/app/bindings.js';
import {
  assertError,
  assertSchema,
  get,
  KEY,
  pathOf,
  post,
  tick,
  useMock,
  waitFor,
  withApp,
  withMock,
} from '../support/index.js';
import { HandTimers } from '../support/timers.js';

const CHAT_OP = boundOperations.find((op) => op.id === 'chat.completions')!;
const CHAT = pathOf('chat.completions');
const mock = useMock(test);
const rules = JSON.parse(readFileSync(new URL('../../fixtures/replies.json', import.meta.url), 'utf8')) as {
  rules: { id: string; reply: string }[];
};
const LONG = rules.rules.find((r) => r.id === 'long')!.reply;
const ask = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o',
  messages: [{ role: 'user', content }],
  ...extra,
});

/** The data lines of an SSE body, each event's JSON parsed; the terminator stays a string. */
function events(text: string): unknown[] {
  assert.ok(text.endsWith('\n\n'), 'every event ends with a blank line');
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      assert.match(block, /^data: /, block.slice(0, 80));
      const data = block.slice(6);
      return data === '[DONE]' ? data : JSON.parse(data);
    });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Chunk = any;
const contentOf = (chunks: Chunk[]) => chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');

test('plain answer: a chat.completion with message, finish reason and real token counts', async () => {
  const body = ask('hello there');
  const res = await post(mock().url, CHAT, body);
  assert.is(res.status, 200);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assertSchema('chat-completion.json', res.json);
  const { choices, usage, object, id } = res.json;
  assert.is(object, 'chat.completion');
  assert.match(id, /^chatcmpl-[A-Za-z0-9]{29}$/);
  assert.equal(choices[0].message, {
    role: 'assistant',
    content: 'Hello! How can I help you today?',
    refusal: null,
    annotations: [],
  });
  assert.is(choices[0].finish_reason, 'stop');
  assert.is(choices[0].logprobs, null);
  assert.is(usage.prompt_tokens, countChatPromptTokens(body.messages, 'o200k_base'));
  assert.is(usage.completion_tokens, countTokens(choices[0].message.content, 'o200k_base'));
  assert.is(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  assert.is(res.headers['x-mock-reply-rule'], 'greeting');
});

test('a model of the cl100k family is counted with cl100k', async () => {
  const body = {
    model: 'gpt-4',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'お誕生日おめでとう' },
    ],
  };
  const res = await post(mock().url, CHAT, body);
  assert.is(res.json.usage.prompt_tokens, countChatPromptTokens(body.messages, 'cl100k_base'));
  assert.is(res.json.usage.completion_tokens, countTokens(res.json.choices[0].message.content, 'cl100k_base'));
});

test('stream: role first, content pieces, finish chunk, [DONE]; shared id, created and model; no usage key', async () => {
  const body = ask('Tell me about unicode', { stream: true });
  const res = await post(mock().url, CHAT, body);
  assert.is(res.status, 200);
  assert.match(String(res.headers['content-type']), /^text\/event-stream/);
  const all = events(res.text);
  assert.is(all.at(-1), '[DONE]');
  const chunks = all.slice(0, -1) as Chunk[];
  for (const c of chunks) {
    assertSchema('chat-completion-chunk.json', c);
    assert.equal(
      [c.id, c.object, c.created, c.model],
      [chunks[0].id, 'chat.completion.chunk', chunks[0].created, 'gpt-4o'],
    );
    assert.not.ok('usage' in c, 'no usage key without include_usage');
  }
  assert.equal(chunks[0].choices, [
    { index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null },
  ]);
  const middle = chunks.slice(1, -1);
  assert.ok(middle.length > 50, 'a token or a few per chunk');
  for (const c of middle) {
    assert.equal(Object.keys(c.choices[0].delta), ['content']);
    assert.ok(c.choices[0].delta.content.length > 0);
    assert.is(c.choices[0].finish_reason, null);
  }
  assert.equal(chunks.at(-1).choices, [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
  const plain = await post(mock().url, CHAT, ask('Tell me about unicode'));
  assert.is(contentOf(chunks), plain.json.choices[0].message.content);
});

test('stream with include_usage: usage null on every chunk, then a usage chunk with choices [] before [DONE]', async () => {
  const res = await post(mock().url, CHAT, ask('ping', { stream: true, stream_options: { include_usage: true } }));
  const all = events(res.text) as Chunk[];
  assert.is(all.at(-1), '[DONE]');
  const chunks = all.slice(0, -1);
  const last = chunks.at(-1);
  for (const c of chunks) assertSchema('chat-completion-chunk.json', c);
  for (const c of chunks.slice(0, -1)) assert.is(c.usage, null);
  assert.equal(last.choices, []);
  assert.is(last.id, chunks[0].id);
  const plain = await post(mock().url, CHAT, ask('ping'));
  assert.equal(last.usage, plain.json.usage);
  assert.equal(
    chunks.map((c: Chunk) => c.choices[0]?.finish_reason),
    [null, null, 'stop', undefined],
  );
});

test('max_tokens cuts to exactly that many tokens with finish_reason "length", streamed or not', async () => {
  for (const field of ['max_tokens', 'max_completion_tokens']) {
    const res = await post(mock().url, CHAT, ask('give me a long answer', { [field]: 37 }));
    assert.is(res.json.choices[0].finish_reason, 'length', field);
    assert.is(res.json.usage.completion_tokens, 37);
    assert.is(countTokens(res.json.choices[0].message.content, 'o200k_base'), 37);
    assert.ok(LONG.startsWith(res.json.choices[0].message.content));
  }
  const streamed = events(
    (await post(mock().url, CHAT, ask('give me a long answer', { max_tokens: 37, stream: true }))).text,
  ).slice(0, -1) as Chunk[];
  assert.is(streamed.at(-1).choices[0].finish_reason, 'length');
  assert.is(streamed.length, 37 + 2);
});

test('a limit above the model maximum is a 400 naming the field, worded like the real API', async () => {
  const res = await post(mock().url, CHAT, ask('hi', { max_tokens: 50_000 }));
  assertError(res, 400, 'max_tokens');
  assert.is(res.json.error.code, 'invalid_value');
  assert.is(
    res.json.error.message,
    'max_tokens is too large: 50000. This model supports at most 16384 completion tokens, whereas you provided 50000.',
  );
  assertError(await post(mock().url, CHAT, ask('hi', { max_completion_tokens: 0 })), 400, 'max_completion_tokens');
});

test('stop cuts before the first occurrence of any stop sequence, finish_reason "stop"', async () => {
  const res = await post(mock().url, CHAT, ask('give me a long answer', { stop: ['mock', 'Why'], max_tokens: 500 }));
  const content = res.json.choices[0].message.content;
  // "Why" comes first in the text although it is listed second.
  assert.ok(LONG.indexOf('Why') < LONG.indexOf('mock'));
  assert.is(content, LONG.slice(0, LONG.indexOf('Why')));
  assert.is(res.json.choices[0].finish_reason, 'stop');
  assert.is(res.json.usage.completion_tokens, countTokens(content, 'o200k_base'));
});

test('prompts beyond the context window are a 400 context_length_exceeded on messages', async () => {
  const res = await post(mock().url, CHAT, {
    model: 'gpt-4',
    messages: [{ role: 'user', content: 'hello '.repeat(9000) }],
  });
  assertError(res, 400, 'messages');
  assert.is(res.json.error.code, 'context_length_exceeded');
  assert.match(res.json.error.message, /maximum context length is 8192 tokens/);
});

test('a long prompt is counted with pauses (the handler answers later), to the same usage as a short one', async () => {
  await withMock({}, async (m) => {
    const call = (content: string, stream = false) => {
      const body = { model: 'gpt-4o', messages: [{ role: 'user', content }], stream };
      return chatCompletions({
        body,
        raw: JSON.stringify(body),
        headers: {},
        params: {},
        key: undefined,
        baseUrl: m.url,
        services: m.services,
        plan: planFor(m.services, CHAT_OP, body, {}),
      });
    };
    const long = 'a few words of a long prompt '.repeat(LONG_PROMPT_CHARS / 20);
    assert.ok(!(call('hello') instanceof Promise), 'an ordinary prompt is answered at once');
    const later = call(long);
    assert.ok(later instanceof Promise);
    const reply = (await later) as Extract<Reply, { kind: 'json' }>;
    const expected = countChatPromptTokens([{ role: 'user', content: long }], 'o200k_base');
    assert.is(reply.usage?.promptTokens, expected);
    // A stream without a usage chunk: its tokens for the rate limit take the prompt the handler counted.
    const stream = (await call(long, true)) as Extract<Reply, { kind: 'sse' }>;
    let streamed = 0;
    for (let i = 0; i < stream.events.length; i++) streamed += stream.events.tokens(i);
    assert.is(tokensOf(stream, undefined, m.services), streamed + expected);
  });
});

test('a prompt past twice the context window is counted only that far: the 400 says "more than" it', async () => {
  // gpt-4: a window of 8192 tokens. Just past it, the count is exact; far past, it stops at twice the window.
  const words = (n: number) => Array.from({ length: n }, (_, i) => `w${(i * 7919) % 100_003}`).join(' ');
  const near = words(4000);
  const nearTokens = countChatPromptTokens([{ role: 'user', content: near }], 'cl100k_base');
  assert.ok(nearTokens > 8192 && nearTokens < 2 * 8192 && near.length > LONG_PROMPT_CHARS, String(nearTokens));
  const exact = await post(mock().url, CHAT, { model: 'gpt-4', messages: [{ role: 'user', content: near }] });
  assertError(exact, 400, 'messages');
  assert.match(exact.json.error.message, new RegExp(`resulted in ${nearTokens} tokens`));
  const far = await post(mock().url, CHAT, { model: 'gpt-4', messages: [{ role: 'user', content: words(200_000) }] });
  assertError(far, 400, 'messages');
  assert.is(far.json.error.code, 'context_length_exceeded');
  assert.match(far.json.error.message, /However, your messages resulted in more than 16384 tokens\./);
});

test('determinism: identical requests give byte-identical bodies, streamed or not; sampling parameters change nothing', async () => {
  const { url } = mock();
  for (const body of [
    ask('what is the meaning of life?'),
    ask('what is the meaning of life?', { stream: true, stream_options: { include_usage: true } }),
  ]) {
    const [a, b] = await Promise.all([post(url, CHAT, body), post(url, CHAT, body)]);
    assert.ok(a.bytes.equals(b.bytes));
  }
  const base = await post(url, CHAT, ask('what is the meaning of life?'));
  const sampled = await post(
    url,
    CHAT,
    ask('what is the meaning of life?', { temperature: 1.7, top_p: 0.2, seed: 42 }),
  );
  assert.is(sampled.json.choices[0].message.content, base.json.choices[0].message.content);
  assert.equal(sampled.json.usage, base.json.usage);
});

test('a chat id is derived from the exact body text, whether made anew or found among the kept ids', () => {
  const bodies = Array.from({ length: 1100 }, (_, i) => JSON.stringify(ask(`question number ${i}`)));
  const long = 'y'.repeat(3000);
  bodies.push(
    JSON.stringify(ask(`${long}1`)),
    JSON.stringify(ask(`${long}2`)),
    JSON.stringify(ask('x'.repeat(5000))),
    '{"model":"gpt-4o","messages":[{"role":"user","content":"naïve 日本語"}]}',
  );
  // Twice over more bodies than are kept: the second pass finds some and makes the others again.
  for (let pass = 0; pass < 2; pass++) {
    for (const raw of bodies)
      assert.is(chatIdOf(raw), idFrom(digest('chat.completions', raw), 'chatcmpl-', 29), raw.slice(0, 60));
  }
  assert.is.not(chatIdOf(bodies[0]!), chatIdOf(`${bodies[0]!} `));
});

test('the default reply is never empty, quotes the question and depends only on the conversation', async () => {
  const { url } = mock();
  const a = await post(url, CHAT, ask('Which colour is the sky on Mars?'));
  assert.is(a.headers['x-mock-reply-rule'], 'default');
  assert.match(a.json.choices[0].message.content, /Which colour is the sky on Mars\?/);
  const noUser = await post(url, CHAT, { model: 'gpt-4o', messages: [{ role: 'system', content: 'You are terse.' }] });
  assert.ok(noUser.json.choices[0].message.content.length > 20);
});

test('X-Mock-Reply-Rule picks a rule by id; an unknown id is a 400 envelope naming the header', async () => {
  const { url } = mock();
  const picked = await post(url, CHAT, ask('anything at all'), KEY, { 'X-Mock-Reply-Rule': 'ping' });
  assert.is(picked.json.choices[0].message.content, 'pong');
  const bad = await post(url, CHAT, ask('anything'), KEY, { 'X-Mock-Reply-Rule': 'no-such-rule' });
  assertError(bad, 400, 'x-mock-reply-rule');
  assert.is(bad.json.error.code, 'unknown_reply_rule');
  assert.match(bad.json.error.message, /no-such-rule/);
});

test('an invalid X-Mock-Pacing header on a stream is a 400 naming the header', async () => {
  const res = await post(mock().url, CHAT, ask('ping', { stream: true }), KEY, { 'X-Mock-Pacing': 'fast please' });
  assertError(res, 400, 'x-mock-pacing');
});

test('pacing: the config sets the default, X-Mock-Pacing overrides it, and each event carries its true token count', async () => {
  await withMock({ pacing: { timeToFirstTokenMs: 5, tokensPerSecond: 2000 } }, async (m) => {
    const body = {
      model: 'gpt-4',
      messages: [{ role: 'user', content: 'show me unicode' }],
      stream: true,
      stream_options: { include_usage: true },
    };
    const call = (pacing?: { tps: number }) =>
      chatCompletions({
        body,
        raw: JSON.stringify(body),
        headers: {},
        params: {},
        key: undefined,
        baseUrl: m.url,
        services: m.services,
        plan: { ...planFor(m.services, CHAT_OP, body, {}), pacing },
      });
    const byConfig = (await call()) as Extract<Reply, { kind: 'sse' }>;
    assert.equal(byConfig.pacing, { timeToFirstTokenMs: 5, tokensPerSecond: 2000 });
    // What the request's X-Mock-Pacing asked for (read once, before the handler) over the server's pacing.
    assert.equal(((await call({ tps: 20 })) as typeof byConfig).pacing, {
      timeToFirstTokenMs: 5,
      tokensPerSecond: 20,
    });
    // cl100k splits some CJK characters and emoji over several tokens: those events count them all.
    const events = eventsOf(byConfig.events);
    const usage = JSON.parse(events.at(-1)!.data).usage;
    assert.is(
      events.reduce((sum, e) => sum + e.tokens, 0),
      usage.completion_tokens,
    );
    assert.ok(events.some((e) => e.tokens > 1));
    // Paced over HTTP, the stream carries the same bytes as unpaced.
    const paced = await post(m.url, CHAT, body);
    const unpaced = await post(m.url, CHAT, body, KEY, { 'x-mock-pacing': 'ttft=0; tps=0' });
    assert.is(paced.text, unpaced.text);
  });
});

/** Sends a chat request over a bare TCP socket and counts the reads: what the network delivered, before any HTTP
 * parsing. */
function socketReads(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ reads: number; text: string }> {
  const payload = JSON.stringify(body);
  const { hostname, port } = new URL(url);
  const head = [
    `POST ${CHAT} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    `Authorization: Bearer ${KEY}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(payload)}`,
    'Connection: close',
  ];
  for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`);
  return new Promise((resolve, reject) => {
    let reads = 0;
    const parts: Buffer[] = [];
    // write, not end: node:http treats a half-closed socket as a client that left, and aborts the stream.
    const socket = connect(Number(port), hostname, () => socket.write(`${head.join('\r\n')}\r\n\r\n${payload}`));
    socket.on('data', (d: Buffer) => {
      reads++;
      parts.push(d);
    });
    socket.on('end', () => resolve({ reads, text: Buffer.concat(parts).toString('utf8') }));
    socket.on('error', reject);
  });
}

/** The body of a raw chunked HTTP/1.1 response. */
function dechunk(raw: string): string {
  let rest = Buffer.from(raw.slice(raw.indexOf('\r\n\r\n') + 4));
  const out: Buffer[] = [];
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.subarray(0, eol).toString('latin1'), 16);
    if (!size) return Buffer.concat(out).toString('utf8');
    out.push(rest.subarray(eol + 2, eol + 2 + size));
    rest = rest.subarray(eol + 4 + size);
  }
}

test('1,000 tokens without pacing leave in many writes: the client socket sees many reads, not one burst', async () => {
  const { reads, text } = await socketReads(mock().url, ask('x', { stream: true, max_tokens: 1000 }), {
    'X-Mock-Reply-Rule': 'long',
  });
  assert.match(text, /^HTTP\/1\.1 200 /);
  const chunks = events(dechunk(text)).slice(0, -1) as Chunk[];
  assert.is(chunks.length, 1000 + 2);
  const plain = await post(mock().url, CHAT, ask('x', { max_tokens: 1000 }), KEY, { 'X-Mock-Reply-Rule': 'long' });
  assert.is(contentOf(chunks), plain.json.choices[0].message.content);
  // One write of the whole stream arrives in a handful of socket reads (the kernel's buffer size); batches arrive one
  // by one.
  assert.ok(reads >= 50, `only ${reads} reads`);
});

test('a client that disconnects mid-stream stops the work at once: outcome "aborted", no write after it', async () => {
  let record: RequestRecord | undefined;
  // Stream timers that run when the test runs them: one round of due waits per turn while the client is
  // there, and after it, every wait the stream could have left behind.
  const timers = new HandTimers();
  const runHeld = () => timers.runAll();
  await withApp(
    {},
    { streamTimers: timers, observers: [(r) => void (r.stream && (record = r))] },
    async (url, _app, server) => {
      let writes = 0;
      let writesAtAbort = -1;
      server.prependListener('request', (_req, res) => {
        const write = res.write.bind(res);
        res.write = ((...args: Parameters<typeof write>) => {
          writes++;
          return write(...args);
        }) as typeof res.write;
      });
      const req = httpRequest(
        new URL(CHAT, url),
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${KEY}`,
            'content-type': 'application/json',
            'x-mock-pacing': 'tps=50',
            'x-mock-reply-rule': 'long',
          },
        },
        (res) => {
          res.once('data', () => req.destroy()); // the first event arrived: hang up
        },
      );
      req.on('error', () => {});
      req.end(JSON.stringify(ask('x', { stream: true })));
      const r = await waitFor('the stream reported aborted', () => {
        if (!record) runHeld();
        return record;
      });
      writesAtAbort = writes;
      assert.is(r.stream, 'aborted');
      assert.ok(writesAtAbort < 10, `${writesAtAbort} writes before the hang-up was seen`);
      assert.is(timers.pending.size, 0, 'no wait left behind');
      runHeld();
      await tick();
      assert.is(writes, writesAtAbort, 'nothing is written after the client left');
    },
  );
});

test('the journal shows the bytes each answer had: a plain one, a broken one (fault), one too long to keep whole', async () => {
  const { url } = mock();
  const lastEntry = async () =>
    (
      (await get(url, '/__admin/requests', null)).json.data as {
        requestId: string;
        responseBody?: string;
        responseBodyChars?: number;
      }[]
    ).at(-1)!;
  const plain = await post(url, CHAT, ask('What does the journal keep of me?'));
  assert.is(plain.status, 200);
  const entry = await lastEntry();
  assert.is(entry.responseBody, plain.bytes.toString('utf8'));
  assert.is(entry.responseBodyChars, plain.bytes.toString('utf8').length);
  // The same conversation again: its own id in the answer, and in the journal.
  const again = await post(url, CHAT, ask('What does the journal keep of me?', { temperature: 0.5 }));
  assert.is.not(again.json.id, plain.json.id);
  assert.is((await lastEntry()).responseBody, again.bytes.toString('utf8'));
  const broken = await new Promise<string>((resolve, reject) => {
    const payload = JSON.stringify(ask('What does the journal keep of me?'));
    const req = httpRequest(
      new URL(CHAT, url),
      {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'x-mock-fault': 'malformed' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
  assert.throws(() => JSON.parse(broken));
  assert.is((await lastEntry()).responseBody, broken);

  const dir = mkdtempSync(join(tmpdir(), 'uam-rules-'));
  const file = join(dir, 'rules.json');
  writeFileSync(
    file,
    JSON.stringify({ rules: [{ id: 'huge', match: { contains: 'huge' }, reply: 'word '.repeat(5000) }] }),
  );
  await withMock({ replyRules: file }, async (big) => {
    const res = await post(big.url, CHAT, ask('a huge answer, please'));
    const text = res.bytes.toString('utf8');
    assert.ok(text.length > 20_000, `${text.length} characters`);
    const entries = (await get(big.url, '/__admin/requests', null)).json.data as {
      requestId: string;
      responseBody: string;
      responseBodyChars: number;
    }[];
    const long = entries.at(-1)!;
    assert.is(long.responseBodyChars, text.length);
    assert.ok(text.startsWith(long.responseBody) && long.responseBody.length < text.length, 'cut');
    const whole = await get(big.url, `/__admin/requests/${long.requestId}/body`, null);
    assert.is(whole.bytes.toString('utf8'), text);
  });
});

test.run();
