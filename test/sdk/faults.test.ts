import { test } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import type { JournalEntry } from '../../src/domain/journal/journal.js';
import { KEY, request, useMock, rejection } from '../support/index.js';

const mock = useMock(test);
const BODY = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hello' }] };

const client = (quiet = false) =>
  new OpenAI({
    apiKey: KEY,
    baseURL: `${mock().url}/text-provider`,
    maxRetries: 2,
    ...(quiet ? { logLevel: 'off' as const } : {}),
  });
const admin = (method: string, path: string, body?: unknown) => request(mock().url, path, { method, body, key: null });
const attempts = async (): Promise<JournalEntry[]> =>
  ((await admin('GET', '/__admin/requests')).json.data as JournalEntry[]).filter(
    (e) => e.operation === 'chat.completions',
  );

/** The delays the code under test asked setTimeout for while `fn` ran (the SDK sleeps with setTimeout). */
async function timeoutsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; delays: number[] }> {
  const real = globalThis.setTimeout;
  const delays: number[] = [];
  globalThis.setTimeout = ((cb: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    // The SDK's own waits: the server in this process arms timers of its own (its connections' watch among them).
    if (/[\\/]node_modules[\\/]openai[\\/]/.test(new Error().stack ?? '')) delays.push(ms ?? 0);
    return real(cb, ms, ...args);
  }) as typeof setTimeout;
  try {
    return { result: await fn(), delays };
  } finally {
    globalThis.setTimeout = real;
  }
}

test.before.each(async () => {
  await admin('DELETE', '/__admin/faults');
  await admin('DELETE', '/__admin/requests');
  await admin('POST', '/__admin/reset');
});

test('two 500s then success: the SDK retries and succeeds; the journal shows 3 attempts', async () => {
  await admin('POST', '/__admin/faults', {
    match: { operation: 'chat.completions' },
    fault: { status: 500, retryAfter: 0.01 },
    times: 2,
  });
  const completion = await client().chat.completions.create(BODY);
  assert.is(completion.object, 'chat.completion');
  const seen = await attempts();
  assert.equal(
    seen.map((e) => [e.status, e.retryCount]),
    [
      [500, 0],
      [500, 1],
      [200, 2],
    ],
  );
  assert.equal(
    seen.map((e) => e.fault),
    ['status=500;retry-after=0.01 [rule rule-1]', 'status=500;retry-after=0.01 [rule rule-1]', undefined],
  );
});

test('a 429 with retry-after-ms is honoured: the SDK waits exactly that long, not its own backoff', async () => {
  await admin('POST', '/__admin/faults', { fault: { status: 429, retryAfter: 0.037 }, times: 1 });
  const { result, delays } = await timeoutsDuring(() => client().chat.completions.create(BODY));
  assert.is(result.object, 'chat.completion');
  assert.is(delays.filter((d) => d === 37).length, 1, `delays: ${delays.join(', ')}`);
  assert.not.ok(
    delays.some((d) => d >= 300 && d <= 1000),
    `a default backoff was used: ${delays.join(', ')}`,
  );
  assert.equal(
    (await attempts()).map((e) => e.status),
    [429, 200],
  );
});

test('a 429 from Prefer: code=429 is a RateLimitError after every retry', async () => {
  const err = await rejection(
    client().chat.completions.create(BODY, { headers: { prefer: 'code=429' }, maxRetries: 0 }),
  );
  assert.instance(err, OpenAI.RateLimitError);
  assert.is((err as InstanceType<typeof OpenAI.RateLimitError>).code, 'rate_limit_exceeded');
});

test('no-retry: exactly one attempt, the error surfaces at once', async () => {
  const err = await rejection(
    client().chat.completions.create(BODY, { headers: { 'X-Mock-Fault': 'status=500; no-retry' } }),
  );
  assert.instance(err, OpenAI.InternalServerError);
  assert.is((await attempts()).length, 1);
});

test('reset surfaces as the SDK connection error, after the SDK retried it', async () => {
  const err = await rejection(client().chat.completions.create(BODY, { headers: { 'X-Mock-Fault': 'reset' } }));
  assert.instance(err, OpenAI.APIConnectionError);
  assert.not.instance(err, OpenAI.APIConnectionTimeoutError);
  const seen = await attempts();
  assert.equal(
    seen.map((e) => [e.status, e.retryCount, e.fault]),
    [0, 1, 2].map((n) => [0, n, 'reset [header]']),
  );
});

test('empty surfaces as the SDK connection error too', async () => {
  const err = await rejection(
    client().chat.completions.create(BODY, { headers: { 'X-Mock-Fault': 'empty' }, maxRetries: 0 }),
  );
  assert.instance(err, OpenAI.APIConnectionError);
});

test('stream-cut surfaces as an error to the stream consumer, after the chunks that arrived', async () => {
  const stream = await client().chat.completions.create(
    { ...BODY, stream: true },
    { headers: { 'X-Mock-Fault': 'stream-cut=2' } },
  );
  const chunks: unknown[] = [];
  const err = await rejection(
    (async () => {
      for await (const chunk of stream) chunks.push(chunk);
    })(),
  );
  assert.instance(err, Error);
  assert.is(chunks.length, 2);
  assert.is((await attempts())[0]!.stream, 'cut');
});

test('malformed surfaces as a parse error: in a body, and in one event of a stream', async () => {
  const err = await rejection(client().chat.completions.create(BODY, { headers: { 'X-Mock-Fault': 'malformed' } }));
  assert.instance(err, SyntaxError);
  // quiet: the SDK logs the broken event before it throws
  const stream = await client(true).chat.completions.create(
    { ...BODY, stream: true },
    { headers: { 'X-Mock-Fault': 'malformed' } },
  );
  const chunks: unknown[] = [];
  const streamErr = await rejection(
    (async () => {
      for await (const chunk of stream) chunks.push(chunk);
    })(),
  );
  assert.match(String(streamErr), /malformed server-sent event|JSON/i);
  assert.is(chunks.length, 1);
});

test('a seeded chaos rule gives the same fault sequence twice', async () => {
  await admin('POST', '/__admin/faults', {
    id: 'chaos',
    fault: { status: 503, noRetry: true },
    probability: 0.4,
    seed: 2024,
  });
  const run = async () => {
    let out = '';
    for (let i = 0; i < 16; i++) {
      out += await client()
        .chat.completions.create(BODY)
        .then(
          () => '.',
          (err: unknown) => (err instanceof OpenAI.APIError && err.status === 503 ? 'F' : '?'),
        );
    }
    return out;
  };
  const first = await run();
  assert.match(first, /F/);
  assert.match(first, /\./);
  assert.not.match(first, /\?/);
  await admin('POST', '/__admin/reset');
  assert.is(await run(), first);
  assert.is((await attempts()).length, 32, 'no-retry: one attempt per call');
});

test.run();
