// Run: NODE_OPTIONS=--experimental-vm-modules npx jest --config examples/jest/jest.config.mjs
import { afterAll, afterEach, beforeAll, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import { startMockServer } from 'unified-ai-mock';

let mock;
let client;

beforeAll(async () => {
  mock = await startMockServer();
  client = new OpenAI({ baseURL: mock.openaiBaseURL, apiKey: mock.apiKey });
});
afterAll(() => mock.close());
afterEach(() => {
  mock.clearFaultRules();
  mock.clearReplyRules();
  mock.clearRequests();
});

const ask = (content) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

test('answers a chat completion', async () => {
  const completion = await ask('Say this is a test');
  expect(completion.choices[0].message.content).toBe('This is a test.');
});

test('the SDK retries a 429 from a fault rule', async () => {
  mock.addFaultRule({ match: { operation: 'chat.completions' }, fault: { status: 429, retryAfter: 0.01 }, times: 1 });
  const completion = await ask('ping');
  expect(completion.choices[0].message.content).toBe('pong');
  expect(mock.requests().map((r) => [r.status, r.retryCount])).toEqual([[429, 0], [200, 1]]);
});

test('a 500 without retry reaches the caller', async () => {
  mock.addFaultRule({ fault: { status: 500, noRetry: true } });
  await expect(ask('ping')).rejects.toBeInstanceOf(OpenAI.InternalServerError);
  expect(mock.requests()).toHaveLength(1);
});

test('a reply rule gives a canned answer', async () => {
  mock.addReplyRule({ id: 'weather', match: { contains: 'weather' }, reply: 'Sunny, 21 °C.' });
  const completion = await ask('What is the weather in Paris?');
  expect(completion.choices[0].message.content).toBe('Sunny, 21 °C.');
});
