// The official openai package against the running mock: what a real client sees.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { countTokens } from '../../src/text/tokenizer.js';
import { assertSchema, KEY, useMock } from '../support/index.js';

const mock = useMock(test);
const client = (key = KEY, prefix = '/text-provider') =>
  new OpenAI({ apiKey: key, baseURL: `${mock().url}${prefix}`, maxRetries: 0 });
const messages = [
  { role: 'system' as const, content: 'You are a helpful assistant.' },
  { role: 'user' as const, content: 'Please give me a long answer about testing.' },
];

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
}

test('create(): a completion with usage that adds up and the x-request-id as _request_id', async () => {
  const completion = await client().chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Say this is a test' }],
  });
  assertSchema('chat-completion.json', completion);
  assert.is(completion.choices[0]!.message.content, 'This is a test.');
  assert.is(completion.choices[0]!.finish_reason, 'stop');
  const { prompt_tokens, completion_tokens, total_tokens } = completion.usage!;
  assert.is(completion_tokens, countTokens('This is a test.', 'o200k_base'));
  assert.is(total_tokens, prompt_tokens + completion_tokens);
  assert.match(completion._request_id ?? '', /^req_[0-9a-f]{32}$/);
});

test('stream: the text assembled from the chunks equals the plain completion, with usage last', async () => {
  const plain = await client().chat.completions.create({ model: 'gpt-4o', messages, temperature: 0.3, seed: 7 });
  const chunks = await collect(
    await client().chat.completions.create({
      model: 'gpt-4o',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
  for (const c of chunks) assertSchema('chat-completion-chunk.json', c);
  assert.is(chunks[0]!.choices[0]!.delta.role, 'assistant');
  assert.is(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), plain.choices[0]!.message.content);
  assert.ok(chunks.length > 1000, `${chunks.length} chunks`);
  const usageChunk = chunks.at(-1)!;
  assert.equal(usageChunk.choices, []);
  assert.equal(usageChunk.usage, plain.usage);
  assert.is(chunks.at(-2)!.choices[0]!.finish_reason, 'stop');
  assert.ok(chunks.every((c) => c.id === chunks[0]!.id && c.created === chunks[0]!.created && c.model === 'gpt-4o'));
});

test('the SDK stream helper assembles the same message as the plain call', async () => {
  const body = { model: 'gpt-4.1', messages: [{ role: 'user' as const, content: 'Show me some unicode and emoji' }] };
  const plain = await client().chat.completions.create(body);
  const final = await client().chat.completions.stream(body).finalChatCompletion();
  assert.is(final.choices[0]!.message.content, plain.choices[0]!.message.content);
  assert.is(final.choices[0]!.finish_reason, 'stop');
});

test('max_tokens: finish_reason "length" and exactly that many completion tokens, streamed or not', async () => {
  const plain = await client().chat.completions.create({ model: 'gpt-4o', messages, max_tokens: 25 });
  assert.is(plain.choices[0]!.finish_reason, 'length');
  assert.is(plain.usage!.completion_tokens, 25);
  assert.is(countTokens(plain.choices[0]!.message.content!, 'o200k_base'), 25);
  const chunks = await collect(
    await client().chat.completions.create({ model: 'gpt-4o', messages, max_tokens: 25, stream: true }),
  );
  assert.is(chunks.at(-1)!.choices[0]!.finish_reason, 'length');
  assert.is(chunks.map((c) => c.choices[0]!.delta.content ?? '').join(''), plain.choices[0]!.message.content);
});

test('stop: the reply ends before the stop sequence, finish_reason "stop"', async () => {
  const res = await client().chat.completions.create({ model: 'gpt-4o', messages, stop: ['mock'] });
  const content = res.choices[0]!.message.content!;
  assert.is(res.choices[0]!.finish_reason, 'stop');
  assert.not.ok(content.includes('mock'));
  assert.ok(content.endsWith('test against a '), content.slice(-40));
  assert.is(res.usage!.completion_tokens, countTokens(content, 'o200k_base'));
});

test('BadRequestError with param for an invalid temperature', async () => {
  try {
    await client().chat.completions.create({ model: 'gpt-4o', messages, temperature: 3 });
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.instance(err, OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    assert.is(e.status, 400);
    assert.is(e.param, 'temperature');
    assert.is(e.type, 'invalid_request_error');
    assert.match(e.message, /^400 Invalid 'temperature'/);
    assert.match(e.requestID ?? '', /^req_/);
  }
});

test('AuthenticationError for a bad key; the stream call fails before any chunk', async () => {
  for (const call of [
    () => client('sk-wrong').chat.completions.create({ model: 'gpt-4o', messages }),
    () => client('sk-wrong').chat.completions.create({ model: 'gpt-4o', messages, stream: true }),
  ]) {
    try {
      await call();
      assert.unreachable('should have thrown');
    } catch (err) {
      assert.instance(err, OpenAI.AuthenticationError);
      assert.is((err as InstanceType<typeof OpenAI.AuthenticationError>).status, 401);
    }
  }
});

test('an unknown model is a BadRequestError with param "model"', async () => {
  try {
    await client().chat.completions.create({ model: 'gpt-99', messages });
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.instance(err, OpenAI.BadRequestError);
    assert.is((err as InstanceType<typeof OpenAI.BadRequestError>).param, 'model');
  }
});

test('models.list() under the text-provider prefix and under /v1', async () => {
  for (const prefix of ['/text-provider', '/v1']) {
    const page = await client(KEY, prefix).models.list();
    const ids = page.data.map((m) => m.id);
    assert.ok(ids.includes('gpt-4o'), prefix);
    assert.ok(
      page.data.every((m) => m.object === 'model' && typeof m.created === 'number' && typeof m.owned_by === 'string'),
    );
    assert.not.ok(page.hasNextPage());
  }
});

test('the /v1/text-provider base URL works as well', async () => {
  const res = await client(KEY, '/v1/text-provider').chat.completions.create({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'ping' }],
  });
  assert.is(res.choices[0]!.message.content, 'pong');
});

test.run();
