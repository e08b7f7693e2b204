// The request inspector's server side, without a browser: the page and its feed behind the admin
// rule, the live journal feed (bounded for slow readers), and what the journal keeps of a request.
import { request as httpRequest } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../src/contract/errors.js';
import { operation } from '../../src/contract/operations.js';
import type { Reply } from '../../src/contract/reply.js';
import { Journal, type RequestRecord } from '../../src/domain/journal/journal.js';
import { ResponseBodies } from '../../src/domain/responseBodies.js';
import { keyStates } from '../../src/domain/keys.js';
import { INSPECTOR_CSP } from '../../src/handlers/inspector.js';
import { authenticate } from '../../src/pipeline/auth.js';
import { writeFeed } from '../../src/pipeline/feed.js';
import { loadLimits } from '../../src/domain/limits.js';
import { StreamLog } from '../../src/pipeline/sse.js';
import { assertSchema, get, KEY, post, requestRecord, withMock } from '../support/index.js';
import { packageLimits } from '../../src/domain/limits.js';

const RECORDS = packageLimits().records;

// The bounds the journal and the body store read from fixtures/limits.json: the tests cut at exactly these.
const records = loadLimits().records;
const {
  maxBodyChars,
  maxResponseBodyChars,
  maxHeaders,
  maxHeaderNameChars,
  maxHeaderChars,
  maxDetails,
  maxHeldResponseBytes,
} = records;

const record = (over: Partial<RequestRecord> = {}): RequestRecord =>
  requestRecord({
    method: 'POST',
    path: '/text-provider/chat/completions',
    operation: 'chat.completions',
    keyLabel: 'sk...lt',
    model: 'gpt-4o-mini',
    ...over,
  });

/**
 * Reads a text/event-stream until `until` holds for what came, then closes it; `onReady` is called once its
 * ready event (sent once the feed follows the journal) has arrived.
 */
function readEvents(
  url: string,
  path: string,
  until: (text: string) => boolean,
  headers: Record<string, string> = {},
  onReady?: () => void,
): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url + path, { headers }, (res) => {
      let text = '';
      const done = () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text });
      };
      if (res.statusCode !== 200) {
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', done);
        return;
      }
      let ready = false;
      res.on('data', (c: Buffer) => {
        text += c.toString();
        if (!ready && text.includes('event: ready')) {
          ready = true;
          onReady?.();
        }
        if (until(text)) done();
      });
    });
    req.on('error', reject);
    req.end();
  });
}

test('the journal keeps a bounded, masked copy of the request: credentials never, the body cut at records.maxBodyChars', () => {
  const journal = new Journal(10, RECORDS, [KEY, 'admin-token-1234']);
  const body = JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: `my key is ${KEY} ${'x'.repeat(2 * maxBodyChars)}` }],
  });
  journal.record(
    record({
      request: {
        headers: {
          authorization: `Bearer ${KEY}`,
          'x-api-key': 'secret',
          'x-note': `admin-token-1234 ${'y'.repeat(2 * maxHeaderChars)}`,
          'content-type': 'application/json',
        },
        body,
      },
      responseHeaders: { 'x-request-id': 'req_1', 'content-length': 12 },
    }),
  );
  const [entry] = journal.entries();
  const text = JSON.stringify(entry);
  assert.not.ok(text.includes(KEY), 'no key');
  assert.not.ok(text.includes('admin-token-1234'), 'no admin token');
  assert.is(entry!.request!.headers.authorization, 'Bearer sk...lt');
  assert.is(entry!.request!.headers['x-api-key'], '[masked]');
  assert.is(
    String(entry!.request!.headers['x-note']).length,
    maxHeaderChars + 3,
    'cut at records.maxHeaderChars, then ...',
  );
  assert.is(entry!.request!.body!.length, maxBodyChars);
  assert.is(entry!.request!.bodyChars, body.length);
  assert.is(entry!.responseHeaders!['content-length'], '12');
});

test("a stream's events are journalled bounded (records in fixtures/limits.json) and masked, with the total written", () => {
  const { maxStreamEvents, maxStreamEventChars } = loadLimits().records;
  const log = new StreamLog(records);
  log.start = 100;
  const count = maxStreamEvents + 44;
  for (let i = 0; i < count; i++) log.note(`{"n":${i},"k":"${KEY}"}`, 100 + i * 2.25);
  assert.is(log.total, count);
  assert.is(log.events.length, maxStreamEvents, `the writer keeps at most ${maxStreamEvents}`);
  assert.is(log.events[3]!.ms, 6.8, 'offsets in ms from the head, to 0.1 ms');
  const journal = new Journal(10, RECORDS, [KEY]);
  journal.record(record({ stream: 'completed', sse: log }));
  const big = {
    events: Array.from({ length: 100 }, (_, i) => ({ ms: i, data: `${KEY}${'e'.repeat(1000)}` })),
    total: 1000,
  };
  journal.record(record({ stream: 'cut', sse: big }));
  const [small, cut] = journal.entries();
  assert.is(small!.sse!.total, count);
  assert.is(small!.sse!.events.length, maxStreamEvents);
  assert.ok(
    small!.sse!.events.every((e) => !e.data.includes(KEY) && e.data.startsWith('{"n":')),
    'each event masked',
  );
  assert.is(cut!.sse!.total, 1000, 'the count shows a cut');
  const chars = cut!.sse!.events.reduce((n, e) => n + e.data.length, 0);
  assert.ok(chars <= maxStreamEventChars, `at most ${maxStreamEventChars} characters of event text (${chars})`);
  assert.ok(cut!.sse!.events.length < 100);
  assert.not.ok(JSON.stringify(journal.entries()).includes(KEY), 'no key in any event');
});

test('an entry keeps records.maxHeaders headers, names cut at records.maxHeaderNameChars, and records.maxDetails violations', () => {
  const journal = new Journal(10, RECORDS);
  const headers: Record<string, string> = {};
  for (let i = 0; i < maxHeaders + 10; i++) headers[`x-h${i}`] = String(i);
  const longName = `x-${'n'.repeat(2 * maxHeaderNameChars)}`;
  journal.record(
    record({
      request: { headers },
      responseHeaders: { [longName]: 'v' },
      details: Array.from({ length: maxDetails + 10 }, (_, i) => ({ i })),
    }),
  );
  const [entry] = journal.entries();
  assert.is(Object.keys(entry!.request!.headers).length, maxHeaders);
  assert.equal(entry!.responseHeaders, { [longName.slice(0, maxHeaderNameChars)]: 'v' });
  assert.is(entry!.details!.length, maxDetails);
});

test('the journal keeps a response body masked and cut at records.maxResponseBodyChars; of a binary body only its size', () => {
  const journal = new Journal(10, RECORDS, [KEY]);
  const text = JSON.stringify({ echo: `${KEY} <script>alert(1)</script>`, pad: 'p'.repeat(2 * maxResponseBodyChars) });
  journal.record(record({ responseBody: text }));
  journal.record(record({ responseBody: '{"ok":true}' }));
  journal.record(record({ responseBody: Buffer.alloc(5000, 7) }));
  const [long, short, binary] = journal.entries();
  assert.is(long!.responseBody!.length, maxResponseBodyChars);
  assert.is(long!.responseBodyChars, text.length);
  assert.not.ok((long!.responseBody as string).includes(KEY), 'the key is masked');
  assert.ok((long!.responseBody as string).includes('<script>alert(1)</script>'), 'kept as text');
  assert.is(short!.responseBody, '{"ok":true}');
  assert.is(binary!.responseBody, undefined);
  assert.is(binary!.responseBytes, 5000);
  assert.ok(JSON.stringify(binary).length < 1000, 'no bytes in the entry');
});

test('response bodies are held by request id, bounded by size (oldest first), text masked when read', () => {
  const bodies = new ResponseBodies(records, 100, [KEY], 40_000);
  const head = (type: string) => `HTTP/1.1 200 OK\r\nX-Request-Id: x\r\nContent-Type: ${type}\r\n\r\n`;
  bodies.keep(record({ requestId: 'small', responseBody: '{"ok":true}' }));
  assert.is(bodies.get('small'), undefined, 'a body the journal keeps whole is not held again');
  const long = JSON.stringify({ data: [{ b64_json: 'A'.repeat(maxResponseBodyChars) }], note: KEY });
  bodies.keep({
    ...record({ requestId: 'long', responseBody: long }),
    responseHeaders: { 'Content-Type': 'application/json' },
  });
  const text = bodies.get('long')!;
  assert.is(text.contentType, 'application/json');
  assert.not.ok(text.body.toString().includes(KEY), 'masked when read');
  bodies.clear();
  const mp3 = Buffer.alloc(15_000, 1);
  bodies.keep({ ...record({ requestId: 'a', responseBody: mp3 }), responseHead: head('audio/mpeg') } as RequestRecord);
  assert.is(bodies.get('a')!.body, mp3, 'the Buffer itself, not a copy');
  assert.is(bodies.get('a')!.contentType, 'audio/mpeg');
  bodies.keep({
    ...record({ requestId: 'b', responseBody: Buffer.alloc(15_000) }),
    responseHead: head('video/mp4'),
  } as RequestRecord);
  bodies.keep({
    ...record({ requestId: 'c', responseBody: Buffer.alloc(15_000) }),
    responseHead: head('image/png'),
  } as RequestRecord);
  assert.is(bodies.get('a'), undefined, 'evicted: 45000 bytes do not fit in 40000');
  assert.ok(bodies.get('b') && bodies.get('c'));
  assert.ok(bodies.bytes <= 40_000);
  bodies.keep(record({ requestId: 'admin', path: '/__admin/requests/b/body', responseBody: Buffer.alloc(10) }));
  assert.is(bodies.get('admin'), undefined, 'admin calls are not held');
});

test('the body store holds text longer than records.maxResponseBodyChars, and records.maxHeldResponseBytes in all by default', () => {
  const bodies = new ResponseBodies(records, 10);
  bodies.keep(record({ requestId: 'whole', responseBody: 'j'.repeat(maxResponseBodyChars) }));
  bodies.keep(record({ requestId: 'cut', responseBody: 'j'.repeat(maxResponseBodyChars + 1) }));
  assert.is(bodies.get('whole'), undefined, 'the journal keeps it whole');
  assert.ok(bodies.get('cut'), 'the journal cuts it: held here');
  bodies.clear();
  bodies.keep(record({ requestId: 'fits', responseBody: Buffer.alloc(maxHeldResponseBytes) }));
  bodies.keep(record({ requestId: 'over', responseBody: Buffer.alloc(maxHeldResponseBytes + 1) }));
  assert.ok(bodies.get('fits'), 'a body of exactly the bound is held');
  assert.is(bodies.get('over'), undefined, 'one byte more is not');
  assert.is(bodies.bytes, maxHeldResponseBytes);
});

test('GET /__admin/requests/:id/body serves a speech answer with its type; 404 once evicted or unknown', () =>
  withMock({ journalSize: 1 }, async (mock) => {
    const speak = () => post(mock.url, '/voice-provider/tts', { text: 'Hello body store', voice_id: 'rachel' });
    const first = await speak();
    assert.is(first.status, 200);
    const id = String(first.headers['x-request-id']);
    const held = await get(mock.url, `/__admin/requests/${id}/body`, null);
    assert.is(held.status, 200);
    assert.match(String(held.headers['content-type']), /^audio\/mpeg/);
    assert.ok(held.bytes.equals(first.bytes), 'the same bytes');
    assert.match(String(held.headers['content-security-policy']), /sandbox/);
    await speak(); // a journal of one: the second answer evicts the first
    const gone = await get(mock.url, `/__admin/requests/${id}/body`, null);
    assert.is(gone.status, 404);
    assert.is(gone.json.error.code, 'response_body_not_found');
    assert.ok(
      gone.json.error.message.endsWith(`the most recent ${maxHeldResponseBytes / 1048576} MiB.`),
      'the bound of fixtures/limits.json',
    );
    assert.is((await get(mock.url, '/__admin/requests/req_unknown/body', null)).status, 404);
  }));

test('the body endpoint is behind the admin rule: 403 without the token, 200 with it', () =>
  withMock({ adminToken: 'inspector-token-2' }, async (mock) => {
    const spoken = await post(mock.url, '/voice-provider/tts', { text: 'Hello', voice_id: 'rachel' });
    const path = `/__admin/requests/${String(spoken.headers['x-request-id'])}/body`;
    const refused = await get(mock.url, path, null);
    assert.is(refused.status, 403);
    assert.is(refused.json.error.code, 'admin_forbidden');
    assert.is((await get(mock.url, path, null, { authorization: 'Bearer inspector-token-2' })).status, 200);
  }));

/** A speech answer held by the body store: its body path and the bytes the client received. */
async function heldSpeech(url: string): Promise<{ path: string; whole: Buffer }> {
  const spoken = await post(url, '/voice-provider/tts', {
    text: 'A few seconds of speech to ask byte ranges of. '.repeat(4),
    voice_id: 'rachel',
  });
  assert.is(spoken.status, 200);
  return { path: `/__admin/requests/${String(spoken.headers['x-request-id'])}/body`, whole: spoken.bytes };
}

const BODY_CSP = "default-src 'none'; sandbox";

test('the body endpoint answers byte ranges: 206 with Content-Range and exactly those bytes, the end cut to the body', () =>
  withMock({}, async (mock) => {
    const { path, whole } = await heldSpeech(mock.url);
    const total = whole.length;
    assert.ok(total > 1000, `a body of some size (${total} bytes)`);
    const plain = await get(mock.url, path, null);
    assert.is(plain.status, 200);
    assert.is(plain.headers['accept-ranges'], 'bytes');
    assert.is(plain.headers['content-range'], undefined);
    assert.is(plain.headers['content-length'], String(total));
    assert.ok(plain.bytes.equals(whole));
    const cases: [string, number, number][] = [
      ['bytes=0-9', 0, 9],
      ['bytes=0-0', 0, 0],
      ['bytes=100-199', 100, 199],
      [`bytes=${total - 1}-${total - 1}`, total - 1, total - 1],
      ['bytes=500-', 500, total - 1],
      [`bytes=${total - 1}-`, total - 1, total - 1],
      ['bytes=-20', total - 20, total - 1],
      ['bytes=-1', total - 1, total - 1],
      [`bytes=10-${total}`, 10, total - 1], // one past the end: cut
      ['bytes=10-99999999999', 10, total - 1],
      [`bytes=-${total}`, 0, total - 1],
      [`bytes=-${total + 1000}`, 0, total - 1], // a suffix longer than the body: all of it
      ['Bytes=3-5', 3, 5],
      ['bytes=0-1,', 0, 1], // an empty list element is no second range
    ];
    for (const [range, start, end] of cases) {
      const part = await get(mock.url, path, null, { range });
      assert.is(part.status, 206, range);
      assert.is(part.headers['content-range'], `bytes ${start}-${end}/${total}`, range);
      assert.is(part.headers['content-length'], String(end - start + 1), range);
      assert.is(part.bytes.length, end - start + 1, range);
      assert.ok(part.bytes.equals(whole.subarray(start, end + 1)), `${range}: the bytes ${start}-${end} of the body`);
      assert.is(part.headers['accept-ranges'], 'bytes', range);
      assert.match(String(part.headers['content-type']), /^audio\/mpeg/, range);
      assert.is(part.headers['content-security-policy'], BODY_CSP, range);
      assert.is(part.headers['cache-control'], 'no-store', range);
    }
  }));

test('a range past the end is a 416 with Content-Range bytes */length, in the error envelope', () =>
  withMock({}, async (mock) => {
    const { path, whole } = await heldSpeech(mock.url);
    const total = whole.length;
    for (const range of [`bytes=${total}-`, `bytes=${total}-${total + 10}`, 'bytes=99999999-', 'bytes=-0']) {
      const refused = await get(mock.url, path, null, { range });
      assert.is(refused.status, 416, range);
      assert.is(refused.headers['content-range'], `bytes */${total}`, range);
      assert.match(String(refused.headers['content-type']), /^application\/json/, range);
      assertSchema('error.json', refused.json);
      assert.is(refused.json.error.code, 'range_not_satisfiable', range);
      assert.is(refused.json.error.type, 'invalid_request_error', range);
      assert.ok(refused.json.error.message.includes(`${total} bytes long`), refused.json.error.message);
      assert.is(refused.headers['content-security-policy'], BODY_CSP, range);
    }
  }));

test('several ranges, other units, malformed values and If-Range get the whole body (200)', () =>
  withMock({}, async (mock) => {
    const { path, whole } = await heldSpeech(mock.url);
    const ignored: Record<string, string>[] = [
      { range: 'bytes=0-1,5-6' },
      { range: 'bytes=0-1, -1' },
      { range: 'bytes=0-1,99999999-' }, // one of them unsatisfiable: still ignored, not a 416
      { range: 'items=0-5' },
      { range: 'bytes=5-1' },
      { range: 'bytes=abc' },
      { range: 'bytes=-' },
      { range: 'bytes 0-5' },
      { range: '' },
      { range: 'bytes=0-9', 'if-range': '"some-etag"' }, // the answer has no validator, so none matches
      { range: 'bytes=0-9', 'if-range': 'Tue, 24 Nov 2026 06:00:00 GMT' },
    ];
    for (const headers of ignored) {
      const res = await get(mock.url, path, null, headers);
      assert.is(res.status, 200, JSON.stringify(headers));
      assert.is(res.headers['content-range'], undefined, JSON.stringify(headers));
      assert.is(res.headers['accept-ranges'], 'bytes', JSON.stringify(headers));
      assert.ok(res.bytes.equals(whole), `${JSON.stringify(headers)}: the whole body`);
    }
  }));

test('HEAD of the body endpoint carries the same headers as GET, without the bytes', () =>
  withMock({}, async (mock) => {
    const { path, whole } = await heldSpeech(mock.url);
    const statuses: number[] = [];
    for (const range of [undefined, 'bytes=0-9', 'bytes=-0']) {
      const headers: Record<string, string> = range ? { range } : {};
      const got = await fetch(mock.url + path, { headers });
      await got.arrayBuffer();
      const head = await fetch(mock.url + path, { method: 'HEAD', headers });
      statuses.push(head.status);
      assert.is(head.status, got.status, String(range));
      for (const name of [
        'content-type',
        'content-length',
        'content-range',
        'accept-ranges',
        'content-security-policy',
        'cache-control',
      ]) {
        assert.is(head.headers.get(name), got.headers.get(name), `${String(range)}: ${name}`);
      }
      assert.is((await head.arrayBuffer()).byteLength, 0, String(range));
    }
    assert.equal(statuses, [200, 206, 416]);
    const head = await fetch(mock.url + path, { method: 'HEAD' });
    assert.equal(
      [head.headers.get('content-length'), head.headers.get('accept-ranges')],
      [String(whole.length), 'bytes'],
    );
  }));

test('ranges are behind the admin rule too: 403 without the token; 206 and 416 with it', () =>
  withMock({ adminToken: 'range-token-3' }, async (mock) => {
    const { path, whole } = await heldSpeech(mock.url);
    const auth = { authorization: 'Bearer range-token-3' };
    const refused = await get(mock.url, path, null, { range: 'bytes=0-9' });
    assert.is(refused.status, 403);
    assert.is(refused.json.error.code, 'admin_forbidden');
    assert.is(refused.headers['content-range'], undefined);
    const part = await get(mock.url, path, null, { ...auth, range: 'bytes=0-9' });
    assert.is(part.status, 206);
    assert.ok(part.bytes.equals(whole.subarray(0, 10)));
    const past = await get(mock.url, path, null, { ...auth, range: `bytes=${whole.length}-` });
    assert.is(past.status, 416);
    assert.is(
      (await get(mock.url, path, null, { range: `bytes=${whole.length}-` })).status,
      403,
      'the length is not told to a stranger',
    );
  }));

test('journal listeners get each entry as journalled, until they unsubscribe; at most the given number at once', () => {
  const journal = new Journal(10, RECORDS, [KEY]);
  const seen: string[] = [];
  assert.not.ok(journal.listening);
  const stop = journal.subscribe((e) => seen.push(e.request?.headers.authorization as string), 4);
  assert.ok(journal.listening);
  journal.record(record({ request: { headers: { authorization: `Bearer ${KEY}` } } }));
  journal.record(record({ path: '/__admin/faults' })); // admin calls are not journalled, nor sent
  stop!();
  journal.record(record());
  assert.equal(seen, ['Bearer sk...lt']);
  const stops = Array.from({ length: 4 }, () => journal.subscribe(() => {}, 4));
  assert.ok(stops.every(Boolean));
  assert.is(
    journal.subscribe(() => {}, 4),
    undefined,
  );
  stops.forEach((s) => s!());
  assert.ok(journal.subscribe(() => {}, 4));
  const broken = new Journal(10, RECORDS);
  broken.subscribe(() => {
    throw new Error('listener bug');
  }, 1);
  broken.record(record());
  assert.is(broken.entries().length, 1, 'a throwing listener does not stop the journal');
});

test('GET /__admin/requests/events sends each new request as an entry event', () =>
  withMock({}, async (mock) => {
    let following!: () => void;
    const ready = new Promise<void>((resolve) => (following = resolve));
    const events = readEvents(mock.url, '/__admin/requests/events', (t) => t.includes('event: entry'), {}, following);
    await ready;
    await post(mock.url, '/text-provider/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: '<script>x</script>' }],
    });
    const { status, type, text } = await events;
    assert.is(status, 200);
    assert.match(type, /^text\/event-stream/);
    assert.match(text, /event: ready\ndata: \{"capacity":1000/);
    const data = JSON.parse(/event: entry\ndata: (.*)\n/.exec(text)![1]!);
    assert.is(data.operation, 'chat.completions');
    assert.match(data.request.body, /<script>x<\/script>/);
    assert.not.match(text, new RegExp(KEY));
  }));

test('the page and its feed answer 403 without the admin token, and serve with it', () =>
  withMock({ adminToken: 'inspector-token-1' }, async (mock) => {
    for (const path of ['/__admin/', '/__admin', '/__admin/inspector.js', '/__admin/inspector.css']) {
      const res = await get(mock.url, path, null);
      assert.is(res.status, 403, path);
      assert.is(res.json.error.code, 'admin_forbidden');
    }
    const refused = await readEvents(mock.url, '/__admin/requests/events', () => true);
    assert.is(refused.status, 403);
    const ok = await readEvents(mock.url, '/__admin/requests/events', (t) => t.includes('event: ready'), {
      authorization: 'Bearer inspector-token-1',
    });
    assert.is(ok.status, 200);
    const page = await get(mock.url, '/__admin/', null, { authorization: 'Bearer inspector-token-1' });
    assert.ok(page.status === 200 || page.status === 404, 'served (404 only when the page is not built)');
    if (page.status === 200) assert.is(page.headers['content-security-policy'], INSPECTOR_CSP);
  }));

test('a client off this machine gets 403 for the page and its feed (the admin rule, run directly)', async () => {
  const step = authenticate(keyStates([{ key: KEY }]));
  for (const id of ['admin.inspector', 'admin.inspector.script', 'admin.requests.events']) {
    const ctx = { req: { headers: { authorization: `Bearer ${KEY}` }, socket: { remoteAddress: '203.0.113.9' } } };
    try {
      await step(ctx as never, { requestId: 'req_t', operation: operation(id) } as never);
      assert.unreachable(id);
    } catch (err) {
      assert.instance(err, ApiError);
      assert.is((err as ApiError).status, 403);
    }
  }
  assert.is(operation('admin.inspector').auth, 'admin');
});

test('a feed whose reader falls behind is dropped, and stops listening', async () => {
  let stopped = 0;
  let destroyed = false;
  const res = {
    writableLength: 0,
    destroyed: false,
    writeHead() {},
    getHeaders: () => ({}),
    write(text: string) {
      this.writableLength += text.length;
      return false;
    },
    destroy() {
      destroyed = true;
    },
    end() {},
    once() {},
    on() {},
    off() {},
  };
  let send: (event: string, data: string) => void = () => {};
  const reply: Reply = {
    kind: 'feed',
    heartbeatMs: 15_000,
    open(write) {
      send = write;
      return () => stopped++;
    },
  };
  const done = writeFeed({ res } as never, reply as Extract<Reply, { kind: 'feed' }>, undefined, undefined, 1000);
  for (let i = 0; i < 100; i++) send('entry', JSON.stringify({ i, pad: 'z'.repeat(50) }));
  await done;
  assert.ok(destroyed);
  assert.is(stopped, 1);
  assert.ok(res.writableLength < 1200, 'nothing is written once the limit is passed');
});

test('a feed ends when the server shuts down', async () => {
  const stopping = new AbortController();
  let ended = false;
  let stopped = 0;
  const res = {
    writableLength: 0,
    destroyed: false,
    writeHead() {},
    getHeaders: () => ({}),
    write: () => true,
    destroy() {},
    end: () => (ended = true),
    once() {},
    on() {},
    off() {},
  };
  const done = writeFeed(
    { res } as never,
    { kind: 'feed', heartbeatMs: 15_000, open: () => () => stopped++ },
    stopping.signal,
  );
  stopping.abort();
  await done;
  assert.ok(ended);
  assert.is(stopped, 1);
});

test.run();
