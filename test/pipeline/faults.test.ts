import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventEmitter, once } from 'node:events';
import { ConfigError } from '../../src/domain/config.js';
import { createApp } from '../../src/app/createApp.js';
import type { RequestRecord } from '../../src/pipeline/requestContext.js';
import { operations } from '../../src/contract/operations.js';
import { assertError, get, pathOf, post, request, useMock, VALID, withMock, heldEntries } from '../support/index.js';
import { exchange, sseData } from '../domain/faults/wire.js';

const records = new EventEmitter();
const mock = useMock(test, { timeouts: { stallMaxMs: 200 } }, { observers: [(r) => records.emit('record', r)] });

/**
 * Sends one request and resolves with what the client saw and the journal record of it: a broken
 * connection can reach the client before the server has finished recording, so wait for the record.
 */
async function traced<T>(send: () => Promise<T>): Promise<[T, RequestRecord]> {
  const record = once(records, 'record') as Promise<[RequestRecord]>;
  const seen = await send();
  return [seen, (await record)[0]];
}

const CHAT = pathOf('chat.completions');
const STREAM = { ...VALID['chat.completions'], stream: true };
const documented = operations.filter((op) => op.documented);
const call = (op: (typeof operations)[number], headers: Record<string, string>) =>
  request(mock().url, op.path, { method: op.method, body: op.method === 'POST' ? VALID[op.id] : undefined, headers });
const lastEntry = () => heldEntries(mock().services).at(-1)!;

test('Prefer: code=NNN answers that status with an envelope on every documented endpoint', async () => {
  for (const op of documented) {
    for (const code of [400, 401, 404, 429, 500, 503, 418]) {
      const res = await call(op, { prefer: `code=${code}` });
      assertError(res, code);
      assert.is(lastEntry().fault, `status=${code} [header]`, op.id);
    }
  }
});

test('each injected status carries what a client acts on: retry headers, WWW-Authenticate, codes', async () => {
  const op = documented[0]!;
  const r429 = await call(op, { prefer: 'code=429' });
  assert.is(r429.json.error.code, 'rate_limit_exceeded');
  assert.is(r429.json.error.type, 'requests');
  assert.is(r429.headers['retry-after'], '1');
  assert.is(r429.headers['retry-after-ms'], '1000');
  const r401 = await call(op, { prefer: 'code=401' });
  assert.is(r401.headers['www-authenticate'], 'Bearer error="invalid_token"');
  assert.is(r401.json.error.code, 'invalid_api_key');
  const r403 = await call(op, { prefer: 'code=403' });
  assert.is(r403.json.error.type, 'permission_error');
  assert.is(r403.json.error.code, 'permission_denied');
  assert.not.match(r403.json.error.message, /admin/);
  const r500 = await call(op, { 'x-mock-fault': 'status=500' });
  assert.is(r500.json.error.type, 'server_error');
  assert.is(r500.headers['retry-after'], undefined);
  assert.is(r500.headers['x-should-retry'], undefined);
  const r503 = await call(op, { 'x-mock-fault': 'status=503; retry-after=0.25; no-retry' });
  assertError(r503, 503);
  assert.is(r503.headers['retry-after'], '1');
  assert.is(r503.headers['retry-after-ms'], '250');
  assert.is(r503.headers['x-should-retry'], 'false');
  const r429b = await call(op, { 'x-mock-fault': 'status=429;retry-after=30' });
  assert.is(r429b.headers['retry-after'], '30');
  assert.is(r429b.headers['retry-after-ms'], '30000');
});

test('a status fault answers before validation; authentication still comes first', async () => {
  const { url } = mock();
  const invalid = await post(url, CHAT, { model: 'gpt-4o-mini' }, undefined, { 'x-mock-fault': 'status=502' });
  assertError(invalid, 502);
  const badKey = await post(url, CHAT, VALID['chat.completions'], 'sk-wrong', { 'x-mock-fault': 'status=502' });
  assertError(badKey, 401);
  assert.is(badKey.json.error.code, 'invalid_api_key');
});

test('a malformed fault header is a 400 that says what is wrong', async () => {
  const { url } = mock();
  const res = await post(url, CHAT, VALID['chat.completions'], undefined, { 'x-mock-fault': 'status=500;explode' });
  assertError(res, 400, 'x-mock-fault');
  assert.is(res.json.error.code, 'invalid_header');
  assert.match(res.json.error.message, /unknown directive 'explode'/);
  const prefer = await get(url, '/v1/me', undefined, { prefer: 'code=299' });
  assertError(prefer, 400, 'prefer');
});

test('no-retry alone marks a normal answer x-should-retry: false', async () => {
  const res = await get(mock().url, '/v1/me', undefined, { 'x-mock-fault': 'no-retry' });
  assert.is(res.status, 200);
  assert.is(res.headers['x-should-retry'], 'false');
  assert.is(lastEntry().fault, 'no-retry [header]');
});

test('delay waits on the server clock before answering', async () => {
  const { services, url } = mock();
  const slept: number[] = [];
  const real = services.clock.sleep;
  services.clock.sleep = async (ms) => void slept.push(ms);
  try {
    const res = await post(url, CHAT, VALID['chat.completions'], undefined, { 'x-mock-fault': 'delay=150' });
    assert.is(res.status, 200);
    assert.equal(slept, [150]);
    const err = await post(url, CHAT, VALID['chat.completions'], undefined, { 'x-mock-fault': 'delay=20;status=500' });
    assertError(err, 500);
    assert.equal(slept, [150, 20]);
  } finally {
    services.clock.sleep = real;
  }
});

test('a client that leaves during a delay ends the request with no status and no handler work', async () => {
  let recorded: (r: RequestRecord) => void = () => {};
  const record = new Promise<RequestRecord>((resolve) => (recorded = resolve));
  await withMock(
    {},
    async ({ url, services }) => {
      let entered: () => void = () => {};
      const waiting = new Promise<void>((resolve) => (entered = resolve));
      // A delay that ends only when the client leaves: the abort signal is the server noticing it.
      services.clock.sleep = (_ms, signal) => {
        entered();
        return new Promise((resolve) => signal?.addEventListener('abort', () => resolve()));
      };
      const client = new AbortController();
      const sent = exchange(url, '/v1/me', { headers: { 'x-mock-fault': 'delay=60000' }, signal: client.signal });
      await waiting;
      client.abort();
      const seen = await sent;
      assert.is(seen.status, undefined);
      const r = await record;
      assert.is(r.status, 0);
      assert.is(r.fault, 'delay=60000 [header]');
      assert.is(r.stream, 'aborted');
    },
    { observers: [(r) => recorded(r)] },
  );
});

test('reset and empty send no response at all; the journal shows no status', async () => {
  const { url } = mock();
  const [reset, resetRecord] = await traced(() =>
    exchange(url, CHAT, { body: VALID['chat.completions'], headers: { 'x-mock-fault': 'reset' } }),
  );
  assert.is(reset.status, undefined);
  assert.is(reset.error?.code, 'ECONNRESET');
  assert.is(resetRecord.status, 0);
  assert.is(resetRecord.fault, 'reset [header]');
  const [empty, emptyRecord] = await traced(() => exchange(url, '/v1/me', { headers: { 'x-mock-fault': 'empty' } }));
  assert.is(empty.status, undefined);
  assert.match(String(empty.error?.message), /socket hang up/);
  assert.is(emptyRecord.status, 0);
  assert.is(emptyRecord.fault, 'empty [header]');
});

test('malformed: a 200 whose JSON body does not parse', async () => {
  const res = await exchange(mock().url, CHAT, {
    body: VALID['chat.completions'],
    headers: { 'x-mock-fault': 'malformed' },
  });
  assert.is(res.status, 200);
  assert.match(String(res.headers?.['content-type']), /^application\/json/);
  assert.ok(res.complete);
  assert.throws(() => JSON.parse(res.text));
  assert.ok(res.text.startsWith('{"id":"chatcmpl-'));
  assert.is(lastEntry().fault, 'malformed [header]');
});

test('malformed: one SSE event of a stream is broken, the rest and [DONE] arrive', async () => {
  const { url } = mock();
  const clean = sseData((await exchange(url, CHAT, { body: STREAM })).text);
  const res = await exchange(url, CHAT, { body: STREAM, headers: { 'x-mock-fault': 'malformed' } });
  const events = sseData(res.text);
  assert.is(events.length, clean.length);
  assert.is(events.at(-1), '[DONE]');
  const broken = events.filter((e) => {
    try {
      JSON.parse(e === '[DONE]' ? '0' : e);
      return false;
    } catch {
      return true;
    }
  });
  assert.is(broken.length, 1);
  assert.is(events.indexOf(broken[0]!), 1);
});

test('malformed: a binary body keeps its length but loses its signature', async () => {
  const { url } = mock();
  const op = operations.find((o) => o.id === 'voice.tts')!;
  const clean = await exchange(url, op.path, { body: VALID['voice.tts'] });
  const res = await exchange(url, op.path, { body: VALID['voice.tts'], headers: { 'x-mock-fault': 'malformed' } });
  assert.is(res.bytes.length, clean.bytes.length);
  assert.ok(res.bytes.subarray(0, 16).every((b) => b === 0));
  assert.equal(res.bytes.subarray(16), clean.bytes.subarray(16));
});

test('stream-cut=N: N events, then the connection ends with no [DONE]', async () => {
  const { url } = mock();
  for (const n of [0, 2]) {
    const [res, record] = await traced(() =>
      exchange(url, CHAT, { body: STREAM, headers: { 'x-mock-fault': `stream-cut=${n}` } }),
    );
    assert.is(res.status, 200);
    assert.not.ok(res.complete);
    const events = sseData(res.text);
    assert.is(events.length, n);
    for (const e of events) JSON.parse(e);
    assert.is(record.stream, 'cut');
    assert.is(record.fault, `stream-cut=${n} [header]`);
  }
});

test('stream-cut=N on a JSON or binary reply sends N bytes of the declared length, then cuts', async () => {
  const { url } = mock();
  const [res, record] = await traced(() => exchange(url, '/v1/me', { headers: { 'x-mock-fault': 'stream-cut=10' } }));
  assert.is(res.status, 200);
  assert.not.ok(res.complete);
  assert.is(res.bytes.length, 10);
  assert.ok(Number(res.headers?.['content-length']) > 10);
  assert.is(record.stream, 'cut');
  const tts = operations.find((o) => o.id === 'voice.tts')!;
  const [audio, audioRecord] = await traced(() =>
    exchange(url, tts.path, { body: VALID['voice.tts'], headers: { 'x-mock-fault': 'stream-cut=100' } }),
  );
  assert.is(audio.headers?.['content-type'], 'audio/mpeg');
  assert.is(audio.bytes.length, 100);
  assert.not.ok(audio.complete);
  assert.is(audioRecord.stream, 'cut');
  const huge = await exchange(url, '/v1/me', { headers: { 'x-mock-fault': 'stream-cut=100000' } });
  assert.not.ok(huge.complete, 'never the whole body');
  assert.is(huge.bytes.length, Number(huge.headers?.['content-length']) - 1);
});

test('stall=N: N events, then silence until the server maximum ends it', async () => {
  const [res, record] = await traced(() =>
    exchange(mock().url, CHAT, { body: STREAM, headers: { 'x-mock-fault': 'stall=1' } }),
  );
  assert.is(res.status, 200);
  assert.not.ok(res.complete);
  assert.is(sseData(res.text).length, 1);
  assert.is(record.stream, 'stalled');
});

test('stall=N: a client that gives up ends the stall; JSON bodies stall too', async () => {
  const { url } = mock();
  const [res, record] = await traced(() =>
    exchange(url, CHAT, {
      body: STREAM,
      headers: { 'x-mock-fault': 'stall=2' },
      onData: (soFar) => sseData(soFar).length >= 2,
    }),
  );
  assert.is(sseData(res.text).length, 2);
  assert.is(record.stream, 'stalled');
  const [json, jsonRecord] = await traced(() => exchange(url, '/v1/me', { headers: { 'x-mock-fault': 'stall=5' } }));
  assert.is(json.bytes.length, 5);
  assert.not.ok(json.complete);
  assert.is(jsonRecord.stream, 'stalled');
});

test('the admin API is never faulted', async () => {
  const res = await get(mock().url, '/__admin/faults', null, { 'x-mock-fault': 'status=500', prefer: 'code=500' });
  assert.is(res.status, 200);
});

test('with fault headers off, no control header changes a response, not even a malformed one', async () => {
  await withMock({ faultHeaders: false }, async ({ url, services }) => {
    const headerSets: Record<string, string>[] = [
      { 'x-mock-fault': 'status=500' },
      { prefer: 'code=429' },
      { 'x-mock-fault': 'reset' },
      { 'x-mock-fault': 'bogus;;' },
      { 'x-mock-fault': 'stream-cut=1;malformed' },
      { prefer: 'code=abc' },
      { 'x-mock-fault': 'no-retry' },
      { 'x-mock-reply-rule': 'long' },
      { 'x-mock-reply-rule': 'no-such-rule' },
      { 'x-mock-pacing': 'ttft=soon' },
      { 'x-mock-pacing': 'ttft=600000' },
    ];
    for (const op of documented) {
      const plain = await exchange(url, op.path, { body: op.method === 'POST' ? VALID[op.id] : undefined });
      for (const headers of headerSets) {
        const res = await exchange(url, op.path, { body: op.method === 'POST' ? VALID[op.id] : undefined, headers });
        assert.is(res.status, plain.status, `${op.id} ${JSON.stringify(headers)}`);
        assert.ok(res.complete);
        // GET /v1/me reports the key's usage, which every request changes.
        const withoutUsage = (t: string) => JSON.stringify({ ...JSON.parse(t), usage: null });
        const same =
          op.id === 'me' ? withoutUsage(res.text) === withoutUsage(plain.text) : res.bytes.equals(plain.bytes);
        assert.ok(same, `${op.id} ${JSON.stringify(headers)}`);
        assert.is(res.headers?.['x-should-retry'], undefined);
      }
    }
    const stream = await exchange(url, CHAT, { body: STREAM, headers: { 'x-mock-fault': 'stream-cut=1' } });
    assert.is(sseData(stream.text).at(-1), '[DONE]');
    // Pacing only shows on a stream: a malformed pacing header would be a 400, a valid one a wait.
    const plainStream = await exchange(url, CHAT, { body: STREAM });
    for (const headers of [
      { 'x-mock-pacing': 'ttft=soon' },
      { 'x-mock-pacing': 'ttft=600000' },
      { 'x-mock-reply-rule': 'long' },
    ] as Record<string, string>[]) {
      const paced = await exchange(url, CHAT, { body: STREAM, headers });
      assert.ok(paced.bytes.equals(plainStream.bytes), JSON.stringify(headers));
    }
    assert.ok(heldEntries(services).every((e) => e.fault === undefined));
  });
});

test('rules from the config apply without headers, and still apply with fault headers off', async () => {
  const rule = {
    id: 'chat-500',
    match: { operation: 'chat.completions', model: 'gpt-4o-mini' },
    fault: { status: 500 },
    times: 1,
  };
  await withMock({ faultHeaders: false, faultRules: [rule] }, async ({ url }) => {
    const first = await post(url, CHAT, VALID['chat.completions']);
    assertError(first, 500);
    assert.is((await post(url, CHAT, VALID['chat.completions'])).status, 200);
  });
});

test('a config rule the schema accepts but the server cannot is a start-up error naming it', () => {
  assert.throws(
    () =>
      createApp({ faultRules: [{ fault: { status: 500 } }, { match: { operation: 'nope' }, fault: { status: 500 } }] }),
    (err: Error) =>
      err instanceof ConfigError && /faultRules\[1\]\.match\.operation: Unknown operation 'nope'/.test(err.message),
  );
  assert.throws(
    () => createApp({ faultRules: [{ fault: { delayMs: 999999 } }] }),
    (err: Error) =>
      err instanceof ConfigError && /faultRules\[0\]\.fault: .*server maximum of 60000 ms/.test(err.message),
  );
  assert.throws(
    () => createApp({ faultRules: [{ fault: { status: 200 } }] as never }),
    (err: Error) => err instanceof ConfigError && /faultRules/.test(err.message),
  );
});

test.run();
