// The request inspector's server side, without a browser: the page and its feed behind the admin
// rule, the live journal feed (bounded for slow readers), and what the journal keeps of a request.
import { request as httpRequest } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../src/contract/errors.js';
import { operation } from '../../src/contract/operations.js';
import type { Reply } from '../../src/contract/reply.js';
import { Journal, type RequestRecord } from '../../src/domain/journal.js';
import { keyStates } from '../../src/domain/keys.js';
import { INSPECTOR_CSP } from '../../src/handlers/inspector.js';
import { authenticate } from '../../src/pipeline/auth.js';
import { writeFeed } from '../../src/pipeline/feed.js';
import { get, KEY, post, withMock } from '../helpers.js';

const record = (over: Partial<RequestRecord> = {}): RequestRecord => ({
  requestId: 'req_1',
  time: 1,
  method: 'POST',
  path: '/text-provider/chat/completions',
  operation: 'chat.completions',
  keyLabel: 'sk...lt',
  status: 200,
  latencyMs: 1,
  errorCode: undefined,
  details: undefined,
  fault: undefined,
  stream: undefined,
  retryCount: undefined,
  model: 'gpt-4o-mini',
  ...over,
});

/** Reads a text/event-stream until `until` holds for what came, then closes it. */
function readEvents(url: string, path: string, until: (text: string) => boolean, headers: Record<string, string> = {}): Promise<{ status: number; type: string; text: string }> {
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
      res.on('data', (c: Buffer) => {
        text += c.toString();
        if (until(text)) done();
      });
    });
    req.on('error', reject);
    req.end();
  });
}

test('the journal keeps a bounded, masked copy of the request: credentials never, the body cut at 8 KiB', () => {
  const journal = new Journal(10, [KEY, 'admin-token-1234']);
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `my key is ${KEY} ${'x'.repeat(20000)}` }] });
  journal.record(
    record({
      request: { headers: { authorization: `Bearer ${KEY}`, 'x-api-key': 'secret', 'x-note': `admin-token-1234 ${'y'.repeat(2000)}`, 'content-type': 'application/json' }, body },
      responseHeaders: { 'x-request-id': 'req_1', 'content-length': 12 },
    }),
  );
  const [entry] = journal.entries();
  const text = JSON.stringify(entry);
  assert.not.ok(text.includes(KEY), 'no key');
  assert.not.ok(text.includes('admin-token-1234'), 'no admin token');
  assert.is(entry!.request!.headers.authorization, 'Bearer sk...lt');
  assert.is(entry!.request!.headers['x-api-key'], '[masked]');
  assert.ok(String(entry!.request!.headers['x-note']).length <= 515);
  assert.is(entry!.request!.body!.length, 8192);
  assert.is(entry!.request!.bodyChars, body.length);
  assert.is(entry!.responseHeaders!['content-length'], '12');
});

test('journal listeners get each entry as journalled, until they unsubscribe; at most 16 at once', () => {
  const journal = new Journal(10, [KEY]);
  const seen: string[] = [];
  assert.not.ok(journal.listening);
  const stop = journal.subscribe((e) => seen.push(e.request?.headers.authorization as string));
  assert.ok(journal.listening);
  journal.record(record({ request: { headers: { authorization: `Bearer ${KEY}` } } }));
  journal.record(record({ path: '/__admin/faults' })); // admin calls are not journalled, nor sent
  stop!();
  journal.record(record());
  assert.equal(seen, ['Bearer sk...lt']);
  const stops = Array.from({ length: 16 }, () => journal.subscribe(() => {}));
  assert.ok(stops.every(Boolean));
  assert.is(
    journal.subscribe(() => {}),
    undefined,
  );
  stops.forEach((s) => s!());
  assert.ok(journal.subscribe(() => {}));
  const broken = new Journal(10);
  broken.subscribe(() => {
    throw new Error('listener bug');
  });
  broken.record(record());
  assert.is(broken.entries().length, 1, 'a throwing listener does not stop the journal');
});

test('GET /__admin/requests/events sends each new request as an entry event', () =>
  withMock({}, async (mock) => {
    const events = readEvents(mock.url, '/__admin/requests/events', (t) => t.includes('event: entry'));
    await new Promise((r) => setTimeout(r, 100));
    await post(mock.url, '/text-provider/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: '<script>x</script>' }] });
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
    const ok = await readEvents(mock.url, '/__admin/requests/events', (t) => t.includes('event: ready'), { authorization: 'Bearer inspector-token-1' });
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
  };
  let send: (event: string, data: string) => void = () => {};
  const reply: Reply = {
    kind: 'feed',
    open(write) {
      send = write;
      return () => stopped++;
    },
  };
  const done = writeFeed({ res } as never, reply as Extract<Reply, { kind: 'feed' }>, undefined, 1000);
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
  const res = { writableLength: 0, destroyed: false, writeHead() {}, getHeaders: () => ({}), write: () => true, destroy() {}, end: () => (ended = true), once() {} };
  const done = writeFeed({ res } as never, { kind: 'feed', open: () => () => stopped++ }, stopping.signal);
  stopping.abort();
  await done;
  assert.ok(ended);
  assert.is(stopped, 1);
});

test.run();
