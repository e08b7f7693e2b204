// The Vercel AI SDK (`ai` with `@ai-sdk/openai`) against the mock: text, streams, images, typed errors, retries,
// aborts.
// `openai('gpt-4o')` calls the Responses API, which the API does not have: the chat model is `openai.chat(...)`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { APICallError, generateImage, generateText, RetryError, streamText } from 'ai';
import { createOpenAI, type OpenAIProvider } from '@ai-sdk/openai';
import { countTokens } from '../../src/text/tokenizer.js';
import { startMockServer, type MockServer } from '../../src/server/programmatic.js';
import { pngSize, rejection } from '../support/index.js';
import { clientTest, journalEntry, LONG_PROMPT, PACED, skippingBackoff } from './clients.js';

const it = clientTest(test);
/** The AI SDK's retry loop (its waits are skipped, and recorded, where a test says so). */
const BACKOFF = /@ai-sdk[\\/]provider-utils/;
let mock: MockServer;
let openai: OpenAIProvider;

test.before(async () => {
  mock = await startMockServer();
  openai = createOpenAI({ baseURL: mock.openaiBaseURL, apiKey: mock.apiKey });
});
test.after(() => mock.close());
test.after.each(() => {
  mock.clearFaultRules();
  mock.clearRequests();
  mock.reset();
});

const chat = () => mock.requests().filter((e) => e.operation === 'chat.completions');

it('generateText: the text, finish reason and token usage of the chat completion', async () => {
  const result = await generateText({ model: openai.chat('gpt-4o-mini'), prompt: 'Say this is a test' });
  assert.is(result.text, 'This is a test.');
  assert.is(result.finishReason, 'stop');
  assert.is(result.usage.outputTokens, countTokens('This is a test.', 'o200k_base'));
  assert.is(result.usage.totalTokens, result.usage.inputTokens! + result.usage.outputTokens!);
  assert.match(result.response.headers?.['x-request-id'] ?? '', /^req_/);
  assert.equal(
    chat().map((e) => [e.path, e.status, e.model]),
    [['/text-provider/chat/completions', 200, 'gpt-4o-mini']],
  );
});

it('streamText: the streamed text equals the plain answer, with the usage of the final chunk', async () => {
  const model = openai.chat('gpt-4o');
  const plain = await generateText({ model, prompt: LONG_PROMPT, temperature: 0.3, seed: 7 });
  const stream = streamText({ model, prompt: LONG_PROMPT, temperature: 0.3, seed: 7 });
  let text = '';
  let deltas = 0;
  for await (const delta of stream.textStream) {
    text += delta;
    deltas++;
  }
  assert.is(text, plain.text);
  assert.ok(deltas > 1000, `${deltas} deltas`);
  assert.is(await stream.finishReason, 'stop');
  const usage = await stream.usage;
  assert.equal([usage.inputTokens, usage.outputTokens], [plain.usage.inputTokens, plain.usage.outputTokens]);
  assert.equal(
    chat().map((e) => e.stream),
    [undefined, 'completed'],
  );
});

it('generateImage: a PNG of the requested size, inline, from gpt-image-1 (b64_json by default) and dall-e-3 (asked for b64_json)', async () => {
  for (const [id, size] of [
    ['gpt-image-1', '1024x1024'],
    ['dall-e-3', '1792x1024'],
  ] as const) {
    const { image, providerMetadata } = await generateImage({
      model: openai.image(id),
      prompt: 'a lighthouse at dusk',
      size,
    });
    assert.is(image.mediaType, 'image/png', id);
    const [width, height] = size.split('x').map(Number);
    assert.equal(pngSize(Buffer.from(image.uint8Array)), { width, height }, id);
    const [meta] = providerMetadata.openai!.images as { revisedPrompt?: string }[];
    assert.ok(meta?.revisedPrompt?.includes('a lighthouse at dusk'), JSON.stringify(meta));
  }
});

it('typed errors: an APICallError with the status, the envelope and isRetryable; no retry for a 400 or a 401', async () => {
  const bad = await rejection(generateText({ model: openai.chat('gpt-4o'), prompt: 'ping', temperature: 3 }));
  assert.ok(APICallError.isInstance(bad), String(bad));
  const e = bad as APICallError;
  assert.is(e.statusCode, 400);
  assert.is(e.isRetryable, false);
  assert.match(e.message, /^Invalid 'temperature'/);
  assert.is((e.data as { error: { param: string } }).error.param, 'temperature');
  assert.match(e.responseHeaders?.['x-request-id'] ?? '', /^req_/);

  const wrongKey = createOpenAI({ baseURL: mock.openaiBaseURL, apiKey: 'sk-wrong' });
  const denied = await rejection(generateText({ model: wrongKey.chat('gpt-4o'), prompt: 'ping' }));
  assert.ok(APICallError.isInstance(denied));
  assert.is((denied as APICallError).statusCode, 401);

  const unknown = await rejection(
    generateImage({ model: openai.image('dall-e-3'), prompt: 'two cats', n: 2, maxImagesPerCall: 2 }),
  );
  assert.ok(APICallError.isInstance(unknown));
  assert.is(((unknown as APICallError).data as { error: { param: string } }).error.param, 'n');
  assert.equal(
    mock.requests().map((r) => r.status),
    [400, 401, 400],
  );
});

it("openai('gpt-4o') posts to the Responses API, which the API lacks: a 404 that names openai.chat", async () => {
  const err = await rejection(generateText({ model: openai('gpt-4o'), prompt: 'ping' }));
  assert.ok(APICallError.isInstance(err), String(err));
  assert.is((err as APICallError).statusCode, 404);
  assert.match((err as APICallError).message, /openai\.chat\('gpt-4o'\)/);
  assert.equal(
    mock.requests().map((r) => [r.path, r.status]),
    [['/text-provider/responses', 404]],
  );
});

// The AI SDK retries 408, 409, 429 and 5xx up to maxRetries (default 2) times, waiting retry-after-ms or
// retry-after when the answer has one under a minute (else 2 s, then 4 s). It sends no retry count header.
it('retries: two 500s then success is three attempts in the journal, waiting what retry-after-ms says', async () => {
  mock.addFaultRule({ match: { operation: 'chat.completions' }, fault: { status: 500, retryAfter: 0.01 }, times: 2 });
  const { result, waits } = await skippingBackoff(BACKOFF, () =>
    generateText({ model: openai.chat('gpt-4o-mini'), prompt: 'Say this is a test' }),
  );
  assert.is(result.text, 'This is a test.');
  assert.equal(waits, [10, 10]);
  assert.equal(
    chat().map((e) => [e.status, e.retryCount]),
    [
      [500, undefined],
      [500, undefined],
      [200, undefined],
    ],
  );
});

it('retries: a 503 on every attempt is a RetryError after 1 + maxRetries attempts', async () => {
  mock.addFaultRule({ match: { operation: 'chat.completions' }, fault: { status: 503, retryAfter: 0.01 } });
  const err = await rejection(generateText({ model: openai.chat('gpt-4o-mini'), prompt: 'ping' }));
  assert.ok(RetryError.isInstance(err), String(err));
  const retry = err as RetryError;
  assert.is(retry.reason, 'maxRetriesExceeded');
  assert.is(retry.errors.length, 3);
  assert.is((retry.lastError as APICallError).statusCode, 503);
  assert.equal(
    chat().map((e) => e.status),
    [503, 503, 503],
  );
});

it('retries: a connection reset is retried after the default backoff (2 s); maxRetries: 0 makes one attempt', async () => {
  mock.addFaultRule({ id: 'reset', match: { operation: 'chat.completions' }, fault: { reset: true }, times: 1 });
  const { result, waits } = await skippingBackoff(BACKOFF, () =>
    generateText({ model: openai.chat('gpt-4o-mini'), prompt: 'ping' }),
  );
  assert.is(result.text, 'pong');
  assert.equal(waits, [2000]);
  mock.addFaultRule({ id: 'once', match: { operation: 'chat.completions' }, fault: { status: 500 }, times: 1 });
  const err = await rejection(generateText({ model: openai.chat('gpt-4o-mini'), prompt: 'ping', maxRetries: 0 }));
  assert.is((err as APICallError).statusCode, 500);
  assert.equal(
    chat().map((e) => [e.status, e.fault]),
    [
      [0, 'reset [rule reset]'],
      [200, undefined],
      [500, 'status=500 [rule once]'],
    ],
  );
});

it('abort: a stream aborted after its first text is marked aborted in the journal', async () => {
  const controller = new AbortController();
  const stream = streamText({
    model: openai.chat('gpt-4o'),
    prompt: LONG_PROMPT,
    abortSignal: controller.signal,
    headers: PACED,
  });
  let deltas = 0;
  for await (const _ of stream.textStream) {
    deltas++;
    controller.abort();
  }
  // The text stream ends quietly; the promises of the result reject with the AbortError.
  assert.is(((await rejection(stream.finishReason)) as Error).name, 'AbortError');
  assert.ok(deltas >= 1 && deltas < 20, `${deltas} deltas`);
  const entry = await journalEntry(mock, (e) => e.stream !== undefined);
  assert.equal([entry.status, entry.stream], [200, 'aborted']);
});

test.run();
