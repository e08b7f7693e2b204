import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  Journal,
  headersFromBlock,
  type Finish,
  type JournalEntry,
  type JournalStore,
} from '../../src/domain/journal/journal.js';
import { completeText } from '../../src/text/complete.js';
import { CompletionText } from '../../src/text/wire.js';
import { loadLimits, packageLimits } from '../../src/domain/limits.js';
import type { RequestRecord } from '../../src/pipeline/requestContext.js';
import { requestRecord } from '../support/index.js';

const RECORDS = packageLimits().records;

const { maxPathChars, maxDetails, maxBodyChars } = loadLimits().records;
const record = (n: number, extra: Partial<RequestRecord> = {}): RequestRecord =>
  requestRecord({ requestId: `req_${n}`, time: n, ...extra });

test('a ring buffer: the newest entries, oldest first, with the total seen', () => {
  const j = new Journal(3, RECORDS);
  assert.equal(j.entries(), []);
  for (let i = 1; i <= 2; i++) j.record(record(i));
  assert.equal(
    j.entries().map((e) => e.requestId),
    ['req_1', 'req_2'],
  );
  for (let i = 3; i <= 7; i++) j.record(record(i));
  assert.equal(
    j.entries().map((e) => e.requestId),
    ['req_5', 'req_6', 'req_7'],
  );
  assert.is(j.total, 7);
  assert.is(j.capacity, 3);
  assert.is(j.clear(), 3);
  assert.equal(j.entries(), []);
  j.record(record(8));
  assert.equal(
    j.entries().map((e) => e.requestId),
    ['req_8'],
  );
});

test('after every record the journal holds exactly the newest min(n, capacity) requests', () => {
  for (const capacity of [1, 2, 3, 5]) {
    const j = new Journal(capacity, RECORDS);
    for (let n = 1; n <= 12; n++) {
      j.record(record(n));
      const want = Array.from({ length: Math.min(n, capacity) }, (_, i) => `req_${n - Math.min(n, capacity) + 1 + i}`);
      assert.equal(
        j.entries().map((e) => e.requestId),
        want,
        `capacity ${capacity} after ${n}`,
      );
    }
  }
});

test('size 0 records nothing; admin calls and health checks are never recorded', () => {
  const off = new Journal(0, RECORDS);
  off.record(record(1));
  assert.equal(off.entries(), []);
  const j = new Journal(5, RECORDS);
  j.record(record(1, { path: '/__admin/requests' }));
  j.record(record(2, { path: '/__health', operation: 'health' }));
  assert.equal(j.entries(), []);
  j.record(record(3, { path: '/v1/me', operation: 'me' }));
  assert.is(j.entries().length, 1);
});

test('long client-supplied parts are cut so each entry stays small (the records bounds of fixtures/limits.json)', () => {
  const j = new Journal(2, RECORDS);
  j.record(record(1, { path: `/${'x'.repeat(10_000)}`, details: Array.from({ length: 500 }, (_, i) => ({ i })) }));
  const [e] = j.entries();
  assert.is(e!.path.length, maxPathChars + 3);
  assert.is(e!.details!.length, maxDetails);
});

const SECRET = 'sk-live-0123456789abcdefSECRET';

test('configured secrets are masked in every string field, details included, before long paths are cut', () => {
  const j = new Journal(5, RECORDS, [SECRET, 'admin-token-123']);
  j.record(
    record(1, {
      requestId: SECRET,
      path: `/${'x'.repeat(250)}${SECRET}`,
      operation: SECRET,
      keyLabel: SECRET,
      errorCode: `code_${SECRET}`,
      details: [
        { param: SECRET, code: 'invalid_value', message: `got '${SECRET}' instead`, count: 1 },
        `bare ${SECRET}`,
        42,
        null,
        [SECRET],
      ],
      fault: `status=503 [rule ${SECRET}]`,
      stream: SECRET,
      model: `gpt-4o admin-token-123`,
    }),
  );
  const [e] = j.entries();
  assert.not.ok(JSON.stringify(e).includes(SECRET), JSON.stringify(e));
  assert.is(e!.requestId, 'sk-l...CRET');
  assert.is(e!.path, `/${'x'.repeat(250)}sk-l....`); // the mask, cut like any long path
  assert.equal(e!.details, [
    { param: 'sk-l...CRET', code: 'invalid_value', message: "got 'sk-l...CRET' instead", count: 1 },
    'bare sk-l...CRET',
    42,
    null,
    ['sk-l...CRET'],
  ]);
  assert.is(e!.fault, 'status=503 [rule sk-l...CRET]');
  assert.is(e!.model, 'gpt-4o ad...23');
  assert.is(e!.errorCode, 'code_sk-l...CRET');
});

test('texts seen again are masked as the first time: one that held a secret every time, however often it comes', () => {
  const j = new Journal(10, RECORDS, [SECRET]);
  for (let n = 1; n <= 3; n++) j.record(record(n, { path: `/v1/${SECRET}`, model: SECRET, operation: 'me' }));
  j.record(record(4, { path: `/v1/${encodeURIComponent(SECRET).replace('-', '%2D')}` }));
  j.record(record(5, { path: `/v1/${encodeURIComponent(SECRET).replace('-', '%2D')}` }));
  const entries = j.entries();
  assert.not.ok(JSON.stringify(entries).includes(SECRET));
  assert.equal(
    entries.map((e) => e.path),
    [...Array(3).fill('/v1/sk-l...CRET'), '/v1/sk-l...CRET', '/v1/sk-l...CRET'],
  );
  assert.equal(
    entries.slice(0, 3).map((e) => [e.model, e.operation]),
    Array(3).fill(['sk-l...CRET', 'me']),
  );
});

test('ever new paths do not grow what the journal remembers beyond its bound', () => {
  const j = new Journal(4, RECORDS, [SECRET]);
  for (let n = 0; n < 3000; n++) j.record(record(n, { path: `/v1/p${n}` }));
  assert.ok((j as unknown as { masking: { clean: Set<string> } }).masking.clean.size <= 1024);
  assert.equal(
    j.entries().map((e) => e.path),
    ['/v1/p2996', '/v1/p2997', '/v1/p2998', '/v1/p2999'],
  );
});

test('a record with nothing to mask or cut comes back as it came; any other is copied, never changed', () => {
  const j = new Journal(5, RECORDS, [SECRET]);
  const clean = record(1);
  const dirty = record(2, { model: SECRET });
  j.record(clean);
  j.record(dirty);
  const [a, b] = j.entries();
  assert.equal(a, clean);
  assert.is.not(b, dirty);
  assert.is(dirty.model, SECRET);
  assert.is(b!.model, 'sk-l...CRET');
});

test('a key percent-encoded in the path is masked too; other encoded paths are kept as sent', () => {
  const j = new Journal(5, RECORDS, [SECRET]);
  j.record(record(1, { path: `/v1/${encodeURIComponent(SECRET).replace('-', '%2D')}` }));
  j.record(record(2, { path: '/v1/caf%C3%A9' }));
  j.record(record(3, { path: '/v1/%E0%A4%A' })); // not decodable
  assert.equal(
    j.entries().map((e) => e.path),
    ['/v1/sk-l...CRET', '/v1/caf%C3%A9', '/v1/%E0%A4%A'],
  );
});

test('an entry is masked, hashed and cut when first read, the same entry each later read; a long body is hashed whole and cut', () => {
  const key = 'sk-live-secret-0123456789';
  const j = new Journal(4, RECORDS, [key]);
  const body = `{"model":"m","messages":[{"role":"user","content":"${key}"}]}`;
  j.record(
    record(1, {
      request: { headers: { authorization: `Bearer ${key}`, 'x-note': key }, body },
      responseHead: `HTTP/1.1 200 OK\r\nx-request-id: req_1\r\nSet-Cookie: a=1\r\nVary: a\r\nVary: b\r\nX-Echo: ${key}\r\n\r\n`,
    }),
  );
  const long = `{"pad":"${'x'.repeat(100_000)}","k":"${key}"}`;
  j.record(record(2, { request: { headers: {}, body: long } }));
  const [first, second] = j.entries();
  assert.is(first!.request!.body!.includes(key), false);
  assert.is(first!.request!.headers['x-note'], 'sk-l...6789');
  assert.is(first!.request!.headers.authorization, 'Bearer sk-m...ault');
  assert.equal(first!.responseHeaders, { 'set-cookie': '[masked]', vary: 'a, b', 'x-echo': 'sk-l...6789' });
  assert.is('responseHead' in first!, false);
  assert.is(first!.bodyHash, createHash('sha256').update(body).digest('hex'));
  assert.is(second!.bodyHash, createHash('sha256').update(long).digest('hex'));
  assert.is(second!.request!.body!.length, maxBodyChars);
  assert.is(second!.request!.bodyChars, long.length);
  assert.is(j.entries()[0], first);
});

test('headersFromBlock: the header lines of a block, repeated names joined', () => {
  assert.equal(
    headersFromBlock('HTTP/1.1 429 Too Many Requests\r\nRetry-After: 2\r\nVary: a\r\nVary: b\r\nbroken line\r\n\r\n'),
    { 'Retry-After': '2', Vary: 'a, b' },
  );
});

test('every field of a record reaches its entry when the entry is made later', () => {
  // Required<>: a field added to RequestRecord fails to compile here until it is added, and then this test
  // fails until the journal keeps it.
  const full: Required<Omit<RequestRecord, 'responseHead'>> = {
    ...record(1),
    errorCode: 'invalid_request_error',
    details: [{ param: 'x' }],
    fault: 'one 500',
    stream: 'completed',
    retryCount: 2,
    model: 'gpt-4o',
    ignoredFields: ['/tools'],
    bodyHash: 'ab'.repeat(32),
    retryAfterMs: 250,
    streamLateMs: 3.5,
    profile: 'large',
    queuedMs: 40.5,
    promptTokens: 12,
    completionTokens: 30,
    violations: [{ rule: 'response.status', expected: '200', actual: '500' }],
    request: { headers: { 'content-type': 'application/json' }, body: '{}' },
    responseHeaders: { 'content-type': 'application/json' },
    responseBody: '{"ok":true}',
    responseBodyChars: 11,
    responseBytes: 11,
    sse: { events: [{ ms: 1, data: '{}' }], total: 1 },
  };
  const j = new Journal(2, RECORDS);
  j.record(full);
  const entry = j.entries()[0]! as unknown as Record<string, unknown>;
  for (const name of Object.keys(full)) assert.ok(entry[name] !== undefined, `${name} is kept`);
  // The same record made into its entry at once (a listener follows the journal): the same entry.
  const watched = new Journal(2, RECORDS);
  const seen: unknown[] = [];
  watched.subscribe((e) => seen.push(e), 1);
  watched.record(full);
  assert.equal(entry, seen[0]);
  // A record with only one of the optional fields keeps it.
  for (const name of Object.keys(full) as (keyof typeof full)[]) {
    const one = new Journal(2, RECORDS);
    one.record({ ...record(3), [name]: full[name] });
    assert.ok((one.entries()[0] as unknown as Record<string, unknown>)[name] !== undefined, `${name} alone is kept`);
  }
  // And a record with none of the optional fields.
  const bare = new Journal(2, RECORDS);
  bare.record(record(2));
  const watchedBare = new Journal(2, RECORDS);
  const seenBare: unknown[] = [];
  watchedBare.subscribe((e) => seenBare.push(e), 1);
  watchedBare.record(record(2));
  assert.equal(bare.entries()[0], seenBare[0]);
});

test('entries share repeated header texts without mixing them up; the response id line is left to requestId', () => {
  const j = new Journal(10, RECORDS);
  const head = (id: string, type: string) => `HTTP/1.1 200 OK\r\nx-request-id: ${id}\r\ncontent-type: ${type}\r\n\r\n`;
  for (let i = 0; i < 6; i++) {
    const type = i % 3 === 2 ? 'text/plain' : 'application/json';
    j.record(
      record(i, { request: { headers: { 'x-client': i % 2 ? 'b' : 'a' } }, responseHead: head(`req_${i}`, type) }),
    );
  }
  const entries = j.entries();
  assert.equal(
    entries.map((e) => [e.requestId, e.request!.headers['x-client'], e.responseHeaders!['content-type']]),
    [0, 1, 2, 3, 4, 5].map((i) => [`req_${i}`, i % 2 ? 'b' : 'a', i % 3 === 2 ? 'text/plain' : 'application/json']),
  );
  assert.ok(entries.every((e) => !('x-request-id' in e.responseHeaders!)));
});

test('a header set that extends, shortens or reorders a recent one, or a block with other header lines, keeps its own headers', () => {
  const j = new Journal(20, RECORDS);
  const sets: Record<string, string>[] = [
    { a: '1', b: '2' },
    { a: '1' },
    { a: '1', b: '2', c: '3' },
    { b: '2', a: '1' },
    { a: '1', b: '22' },
    { a: '1', b: '2' },
    {},
    { c: '3' },
    { c: '1' },
  ];
  const heads = [
    'HTTP/1.1 200 OK\r\nx-request-id: r\r\nx-a: 1\r\n\r\n',
    'HTTP/1.1 201 OK\r\nx-request-id: r\r\nx-a: 1\r\n\r\n',
    'HTTP/1.1 200 OK\r\nx-a: 1\r\n\r\n',
    'HTTP/1.1 200 OKAY\r\nx-request-id: r\r\nx-a: 1\r\n\r\n',
    'HTTP/1.1 200 OK\r\nx-request-id: a-longer-id\r\nx-a: 12\r\n\r\n',
    'HTTP/1.1 200 OK\r\nx-request-id: r\r\nx-a: 2\r\n\r\n',
    'HTTP/1.1 200 OK\r\nx-request-id: r\r\nx-a: 1\r\n\r\n',
    'HTTP/1.1 200 OK\r\nx-b: 2\r\nx-a: 1\r\n\r\n',
    'HTTP/1.1 200 OK\r\nx-request-id: r\r\nx-b: 1\r\n\r\n',
  ];
  // Twice round, so the second time each is one of the recent texts; a list value (repeated header) too.
  for (let round = 0; round < 2; round++)
    for (let i = 0; i < sets.length; i++)
      j.record(record(i, { request: { headers: sets[i]! }, responseHead: heads[i] }));
  j.record(record(99, { request: { headers: { 'set-cookie': ['x=1', 'y=2'] } } }));
  const entries = j.entries();
  for (let n = 0; n < 2 * sets.length; n++) {
    const i = n % sets.length;
    assert.equal(entries[n]!.request!.headers, sets[i], `set ${i}, round ${Math.floor(n / sets.length)}`);
    const status = /^HTTP\/1\.1 (\d+)/.exec(heads[i]!)![1];
    assert.equal(
      entries[n]!.responseHeaders,
      headersFromBlock(heads[i]!.replace(/x-request-id: [^\r]*\r\n/, '')),
      `head ${i}, status ${status}`,
    );
  }
  assert.equal(entries.at(-1)!.request!.headers, { 'set-cookie': '[masked]' });
});

// What a chat completion records: a recipe for its answer, the request as it came, the header block.
const chatRecord = (n: number, extra: Partial<RequestRecord> = {}): RequestRecord => {
  const completion = completeText({ text: `Hello number ${n}!`, encoding: 'o200k_base' });
  const answer = new CompletionText(
    { id: `chatcmpl-${n}abc`, created: 1767225600 + n, model: 'gpt-4o-mini', fingerprint: 'fp_0123456789' },
    completion,
    12 + n,
  );
  return record(n, {
    method: 'POST',
    path: '/v1/text-provider/chat/completions',
    operation: 'chat.completions',
    model: 'gpt-4o-mini',
    latencyMs: 1.25 + n,
    request: {
      headers: { host: 'h', 'content-type': 'application/json', authorization: 'Bearer k' },
      body: `{"model":"gpt-4o-mini","n":${n}}`,
    },
    responseHead: `HTTP/1.1 200 OK\r\nx-request-id: req_${n}\r\ncontent-type: application/json\r\n\r\n`,
    responseBody: answer,
    ...extra,
  });
};

// The same records, each read later (most are held in the journal's columns, some as objects) and made
// into its entry at once (a listener follows the journal): the entries must be the same.
function laterAndAtOnce(records: RequestRecord[], capacity = records.length): [unknown[], unknown[]] {
  const later = new Journal(capacity, RECORDS, ['sk-live-secret-0123456789']);
  for (const r of records) later.record(r);
  const watched = new Journal(capacity, RECORDS, ['sk-live-secret-0123456789']);
  const seen: unknown[] = [];
  watched.subscribe((e) => seen.push(e), 1);
  for (const r of records) watched.record(r);
  return [later.entries(), seen.slice(-capacity)];
}

test('every kind of record reads back as it came, whether the journal kept it in columns or as an object', () => {
  const long = 'x'.repeat(3000);
  // A refusal answered again (validate keeps it) carries the same details array: their JSON is made once.
  const shared = [{ param: 'model', code: 'invalid_type', message: 'Invalid type for model.' }];
  const records: RequestRecord[] = [
    chatRecord(1),
    chatRecord(2, { status: 0, latencyMs: 0.07, errorCode: null }),
    chatRecord(3, { request: { headers: {}, body: '' } }),
    (({ request: _request, responseHead: _head, ...rest }) => ({ ...rest, model: undefined }))(chatRecord(4)),
    // A 400: its details and the envelope's text.
    record(5, {
      status: 400,
      errorCode: 'invalid_type',
      details: [
        { param: 'messages[0].content', code: 'invalid_type', message: 'Invalid type.', at: 3, ok: true },
        { param: null, code: 'x', message: 'y' },
      ],
      request: { headers: { 'content-type': 'application/json' }, body: '{"messages":[{"content":42}]}' },
      responseBody: '{"error":{"message":"Invalid type."}}',
    }),
    // Texts that are not ASCII, down to a lone surrogate: each code unit comes back.
    chatRecord(6, { request: { headers: {}, body: '{"content":"héllo ✓ \ud83d"}' } }),
    // Texts too long for a slot, details JSON would change, a binary body, a key to mask: kept as objects.
    chatRecord(18, { request: { headers: {}, body: `{"pad":"${'y'.repeat(1000)}"}` } }),
    chatRecord(7, { request: { headers: {}, body: `{"pad":"${long}"}` } }),
    record(8, { details: [{ param: 'a', nested: { b: undefined } }] }),
    record(16, { details: [new Date(0)] }),
    record(9, { details: [{ param: 'a', missing: undefined }] }),
    record(10, { details: [{ n: -0 }] }),
    record(15, { details: [{ n: Number.NaN }] }),
    record(11, { responseBody: Buffer.from('binary') }),
    record(12, { responseBody: 'non-ASCII answer: é ✓' }),
    record(17, { requestId: 'req_✓' }),
    record(13, {
      requestId: 'sk-live-secret-0123456789',
      request: { headers: { 'x-key': 'sk-live-secret-0123456789' }, body: '{"k":"sk-live-secret-0123456789"}' },
    }),
    chatRecord(14, { path: '/v1/text-provider/chat/completions?q=1', model: 'gpt-4o' }),
    record(19, { status: 400, details: shared }),
    record(20, { status: 400, details: shared }),
    record(21, { status: 400 }),
    record(22, { status: 400, details: [{ ...shared[0]!, param: 'messages' }] }),
  ];
  const [later, atOnce] = laterAndAtOnce(records);
  assert.equal(later, atOnce);
  // The recipe's text, the request's body and the details are really there.
  const byId = (id: string) => (later as JournalEntry[]).find((e) => e.requestId === id)!;
  const chat = byId('req_1');
  assert.ok(chat.responseBody!.includes('"id":"chatcmpl-1abc"') && chat.responseBody!.includes('Hello number 1!'));
  assert.is(chat.request!.body, '{"model":"gpt-4o-mini","n":1}');
  assert.is(chat.latencyMs, 2.25);
  assert.equal(byId('req_5').details, [
    { param: 'messages[0].content', code: 'invalid_type', message: 'Invalid type.', at: 3, ok: true },
    { param: null, code: 'x', message: 'y' },
  ]);
  assert.is(byId('req_3').request!.body, undefined);
  assert.is(byId('req_4').request, undefined);
  assert.ok(
    byId('sk-l...6789').request!.body!.includes('sk-l...6789'),
    'a key in a request kept as an object is masked',
  );
  assert.ok(Object.is((byId('req_10').details as { n: number }[])[0]!.n, -0), 'JSON would make -0 a 0');
  assert.equal(byId('req_20').details, shared);
  assert.is(byId('req_21').details, undefined);
  assert.is((byId('req_22').details as typeof shared)[0]!.param, 'messages');
});

test('a slot used in turn by a record kept in columns and one kept as an object reads back right after every write', () => {
  const records: RequestRecord[] = [];
  for (let n = 1; n <= 12; n++) records.push(n % 3 === 0 ? chatRecord(n, { fault: 'one 500' }) : chatRecord(n));
  for (const capacity of [1, 2, 3, 5]) {
    const later = new Journal(capacity, RECORDS);
    const watched = new Journal(capacity, RECORDS);
    const seen: unknown[] = [];
    watched.subscribe((e) => seen.push(e), 1);
    for (const r of records) {
      later.record(r);
      watched.record(r);
      // Read every other time, so that some slots are read (made into entries) and then written over.
      if (r.time % 2)
        assert.equal(
          later.entries(),
          seen.slice(-Math.min(seen.length, capacity)),
          `capacity ${capacity} after ${r.time}`,
        );
    }
    assert.equal(later.entries(), seen.slice(-capacity));
    assert.is(later.entries()[0], later.entries()[0], 'an entry is made once');
    later.clear();
    assert.equal(later.entries(), []);
    later.record(chatRecord(99));
    assert.is(later.entries()[0]!.requestId, 'req_99');
  }
});

test('an unread chat completion entry holds none of the objects its request made', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const j = new Journal(10, RECORDS);
  let answer: WeakRef<object> | undefined;
  let headers: WeakRef<object> | undefined;
  (() => {
    const r = chatRecord(1);
    answer = new WeakRef(r.responseBody as object);
    headers = new WeakRef(r.request!.headers);
    j.record(r);
  })();
  // A WeakRef holds its target until the current job ends.
  await new Promise(setImmediate);
  gc();
  assert.is(answer!.deref(), undefined, 'the answer recipe is not held');
  assert.is(headers!.deref(), undefined, 'the request headers object is not held');
  // A record of another kind is held as it came, until it is read.
  const kept = chatRecord(2, { fault: 'one 500' });
  const held = new WeakRef(kept.responseBody as object);
  j.record(kept);
  await new Promise(setImmediate);
  gc();
  assert.ok(held.deref(), 'a record with a fault keeps its recipe');
  assert.ok(j.entries()[0]!.responseBody!.includes('Hello number 1!'));
});

test('the journal keeps its requests in the store it is given: records unread, entries made at once, each made on reading', () => {
  const calls: string[] = [];
  const held: RequestRecord[] = [];
  const store = {
    capacity: 4,
    add: (r: RequestRecord) => void (calls.push(`add ${r.requestId}`), held.push(r)),
    addEntry: (e: JournalEntry) => void (calls.push(`entry ${e.requestId}`), held.push(e as RequestRecord)),
    read: (finish: Finish) => ({ entries: held.map(finish), total: held.length, capacity: 4 }),
    clear: () => held.splice(0).length,
  } satisfies JournalStore;
  const j = new Journal(4, RECORDS, [SECRET], store);
  j.record(record(1));
  j.record(record(2, { path: '/__admin/requests' }));
  const seen: JournalEntry[] = [];
  j.subscribe((e) => seen.push(e), 1);
  j.record(record(3, { path: `/v1/${SECRET}` }));
  assert.equal(calls, ['add req_1', 'entry req_3']);
  assert.is(seen[0]!.path, '/v1/sk-l...CRET');
  assert.is(j.total, 2);
  assert.equal(
    j.entries().map((e) => e.requestId),
    ['req_1', 'req_3'],
  );
  assert.is(j.clear(), 2);
});

test.run();
