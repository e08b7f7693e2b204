// Run: node --test examples/node-test/*.test.mjs
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockServer } from 'unified-ai-mock';

let mock;
let client;

before(async () => {
  mock = await startMockServer();
  client = new OpenAI({ baseURL: mock.openaiBaseURL, apiKey: mock.apiKey });
});
after(() => mock.close());
afterEach(() => {
  mock.clearFaultRules();
  mock.clearReplyRules();
  mock.clearRequests();
});

const ask = (content) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

test('answers a chat completion', async () => {
  const completion = await ask('Say this is a test');
  assert.equal(completion.choices[0].message.content, 'This is a test.');
});

test('the SDK retries a 429 from a fault rule', async () => {
  mock.addFaultRule({ match: { operation: 'chat.completions' }, fault: { status: 429, retryAfter: 0.01 }, times: 1 });
  const completion = await ask('ping');
  assert.equal(completion.choices[0].message.content, 'pong');
  assert.deepEqual(mock.requests().map((r) => [r.status, r.retryCount]), [[429, 0], [200, 1]]);
});

test('a 500 without retry reaches the caller', async () => {
  mock.addFaultRule({ fault: { status: 500, noRetry: true } });
  await assert.rejects(ask('ping'), OpenAI.InternalServerError);
  assert.equal(mock.requests().length, 1);
});

test('a reply rule gives a canned answer', async () => {
  mock.addReplyRule({ id: 'weather', match: { contains: 'weather' }, reply: 'Sunny, 21 °C.' });
  const completion = await ask('What is the weather in Paris?');
  assert.equal(completion.choices[0].message.content, 'Sunny, 21 °C.');
});
