import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Journal } from '../src/journal.js';
import type { RequestRecord } from '../src/middleware/requestContext.js';

const record = (n: number, extra: Partial<RequestRecord> = {}): RequestRecord => ({
  requestId: `req_${n}`, time: n, method: 'GET', path: '/v1/me', operation: 'me', keyLabel: 'sk-m...ault', status: 200, latencyMs: 1,
  errorCode: undefined, details: undefined, fault: undefined, stream: undefined, retryCount: undefined, model: undefined, ...extra,
});

test('a ring buffer: the newest entries, oldest first, with the total seen', () => {
  const j = new Journal(3);
  assert.equal(j.entries(), []);
  for (let i = 1; i <= 2; i++) j.record(record(i));
  assert.equal(j.entries().map((e) => e.requestId), ['req_1', 'req_2']);
  for (let i = 3; i <= 7; i++) j.record(record(i));
  assert.equal(j.entries().map((e) => e.requestId), ['req_5', 'req_6', 'req_7']);
  assert.is(j.total, 7);
  assert.is(j.capacity, 3);
  assert.is(j.clear(), 3);
  assert.equal(j.entries(), []);
  j.record(record(8));
  assert.equal(j.entries().map((e) => e.requestId), ['req_8']);
});

test('after every record the journal holds exactly the newest min(n, capacity) requests', () => {
  for (const capacity of [1, 2, 3, 5]) {
    const j = new Journal(capacity);
    for (let n = 1; n <= 12; n++) {
      j.record(record(n));
      const want = Array.from({ length: Math.min(n, capacity) }, (_, i) => `req_${n - Math.min(n, capacity) + 1 + i}`);
      assert.equal(j.entries().map((e) => e.requestId), want, `capacity ${capacity} after ${n}`);
    }
  }
});

test('size 0 records nothing; admin calls are never recorded', () => {
  const off = new Journal(0);
  off.record(record(1));
  assert.equal(off.entries(), []);
  const j = new Journal(5);
  j.record(record(1, { path: '/__admin/requests' }));
  assert.equal(j.entries(), []);
});

test('long client-supplied parts are cut so each entry stays small', () => {
  const j = new Journal(2);
  j.record(record(1, { path: `/${'x'.repeat(10_000)}`, details: Array.from({ length: 500 }, (_, i) => ({ i })) }));
  const [e] = j.entries();
  assert.is(e!.path.length, 259);
  assert.is(e!.details!.length, 20);
});

test.run();
