// LangChain (`@langchain/openai`) against the mock: text, streams, images, typed errors, retries, aborts.
// ChatOpenAI calls chat completions (it switches to the Responses API only when asked to, or for
// models such as the gpt-5.x pro and codex ones); DallEAPIWrapper calls images/generations.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ChatOpenAI, DallEAPIWrapper, OpenAIClient } from '@langchain/openai';
import type { AIMessageChunk } from '@langchain/core/messages';
import { countTokens } from '../../src/text/tokenizer.js';
import { startMockServer, type MockServer } from '../../src/server/programmatic.js';
import { pngSize, rejection } from '../support/index.js';
import { clientTest, journalEntry, LONG_PROMPT, PACED, skippingBackoff } from './clients.js';

const it = clientTest(test);
/**
 * LangChain's retry loop (p-retry inside @langchain/core): its waits are skipped, and recorded, where a test says so.
 */
const BACKOFF = /@langchain[\\/]core[\\/].*p-retry/;
let mock: MockServer;

test.before(async () => {
  mock = await startMockServer();
});
test.after(() => mock.close());
test.after.each(() => {
  mock.clearFaultRules();
  mock.clearRequests();
  mock.reset();
});

const model = (fields: ConstructorParameters<typeof ChatOpenAI>[0] = {}) =>
  new ChatOpenAI({
    model: 'gpt-4o-mini',
    apiKey: mock.apiKey,
    configuration: { baseURL: mock.openaiBaseURL },
    ...fields,
  });
const chat = () => mock.requests().filter((e) => e.operation === 'chat.completions');

it('invoke(): the message, its usage metadata and finish reason', async () => {
  const message = await model().invoke('Say this is a test');
  assert.is(message.content, 'This is a test.');
  assert.is(message.response_metadata.finish_reason, 'stop');
  const usage = message.usage_metadata!;
  assert.is(usage.output_tokens, countTokens('This is a test.', 'o200k_base'));
  assert.is(usage.total_tokens, usage.input_tokens + usage.output_tokens);
  assert.equal(
    chat().map((e) => [e.path, e.status, e.model]),
    [['/text-provider/chat/completions', 200, 'gpt-4o-mini']],
  );
});

it('stream(): the chunks add up to the plain answer, with the usage of the final chunk', async () => {
  const llm = model({ model: 'gpt-4o', temperature: 0.3 });
  const plain = await llm.invoke(LONG_PROMPT);
  let full: AIMessageChunk | undefined;
  let chunks = 0;
  for await (const chunk of await llm.stream(LONG_PROMPT)) {
    full = full ? full.concat(chunk) : chunk;
    chunks++;
  }
  assert.is(full!.content, plain.content);
  assert.ok(chunks > 1000, `${chunks} chunks`);
  assert.equal(full!.usage_metadata?.output_tokens, plain.usage_metadata?.output_tokens);
  assert.equal(full!.usage_metadata?.input_tokens, plain.usage_metadata?.input_tokens);
  assert.equal(
    chat().map((e) => e.stream),
    [undefined, 'completed'],
  );
});

it('DallEAPIWrapper: the URL of a PNG of the requested size, served by the mock', async () => {
  const dalle = new DallEAPIWrapper({
    model: 'dall-e-3',
    size: '1024x1792',
    apiKey: mock.apiKey,
    baseUrl: mock.openaiBaseURL,
  });
  const url = (await dalle.invoke('a lighthouse at dusk')) as string;
  assert.ok(url.startsWith(mock.url), url);
  const png = await fetch(url);
  assert.is(png.headers.get('content-type'), 'image/png');
  assert.equal(pngSize(Buffer.from(await png.arrayBuffer())), { width: 1024, height: 1792 });
});

it("typed errors: the openai package's classes, with LangChain's error codes; a 400 and a 401 are not retried", async () => {
  const bad = await rejection(model({ temperature: 3 }).invoke('ping'));
  assert.instance(bad, OpenAIClient.BadRequestError);
  const e = bad as InstanceType<typeof OpenAIClient.BadRequestError>;
  assert.is(e.status, 400);
  assert.is(e.param, 'temperature');
  assert.match(e.requestID ?? '', /^req_/);

  const denied = await rejection(model({ apiKey: 'sk-wrong' }).invoke('ping'));
  assert.instance(denied, OpenAIClient.AuthenticationError);
  assert.is((denied as { lc_error_code?: string }).lc_error_code, 'MODEL_AUTHENTICATION');

  const limited = await rejection(
    model({ maxRetries: 0 }).invoke('ping', { options: { headers: { 'X-Mock-Fault': 'status=429' } } }),
  );
  assert.instance(limited, OpenAIClient.RateLimitError);
  assert.is((limited as { lc_error_code?: string }).lc_error_code, 'MODEL_RATE_LIMIT');
  assert.equal(
    chat().map((r) => r.status),
    [400, 401, 429],
  );
});

// LangChain retries itself, up to maxRetries (default 6) times, with p-retry's backoff (1 s, doubling, times a
// random 1 to 2), and gives the openai client under it maxRetries: 0. Each attempt is thus the client's first:
// X-Stainless-Retry-Count is 0 on every one. A 429's retry-after only ever lengthens the wait.
it('retries: two 500s then success is three attempts, each with retry count 0', async () => {
  mock.addFaultRule({ match: { operation: 'chat.completions' }, fault: { status: 500, retryAfter: 0.01 }, times: 2 });
  const { result, waits } = await skippingBackoff(BACKOFF, () => model().invoke('Say this is a test'));
  assert.is(result.content, 'This is a test.');
  assert.is(waits.length, 2);
  assert.ok(
    waits[0]! >= 1000 && waits[0]! <= 2000 && waits[1]! >= 2000 && waits[1]! <= 4000,
    `waits: ${waits.join(', ')}`,
  );
  assert.equal(
    chat().map((e) => [e.status, e.retryCount]),
    [
      [500, 0],
      [500, 0],
      [200, 0],
    ],
  );
});

it('retries: a 503 on every attempt surfaces after 1 + 6 attempts; maxRetries: 1 makes two', async () => {
  mock.addFaultRule({ match: { operation: 'chat.completions' }, fault: { status: 503 } });
  const { result: err } = await skippingBackoff(BACKOFF, () => rejection(model().invoke('ping')));
  assert.instance(err, OpenAIClient.InternalServerError);
  assert.is(chat().length, 7);
  mock.clearRequests();
  await skippingBackoff(BACKOFF, () => rejection(model({ maxRetries: 1 }).invoke('ping')));
  assert.is(chat().length, 2);
});

it('abort: a stream aborted after its first chunk is marked aborted in the journal', async () => {
  const controller = new AbortController();
  const llm = model({ model: 'gpt-4o', configuration: { baseURL: mock.openaiBaseURL, defaultHeaders: PACED } });
  const err = await rejection(
    (async () => {
      for await (const _ of await llm.stream(LONG_PROMPT, { signal: controller.signal })) controller.abort();
    })(),
  );
  assert.is((err as Error).name, 'AbortError');
  const entry = await journalEntry(mock, (e) => e.stream !== undefined);
  assert.equal([entry.status, entry.stream], [200, 'aborted']);
});

test.run();
