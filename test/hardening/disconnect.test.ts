// Clients that leave mid-way: the server notices, stops the work, and keeps serving.
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RequestRecord } from '../../src/pipeline/requestContext.js';
import { KEY, useMock } from '../support/index.js';
import { assertHealthy, chatHead } from './raw.js';

const records: RequestRecord[] = [];
const waiters: ((r: RequestRecord) => void)[] = [];
const mock = useMock(test, {}, { observers: [(r) => (records.push(r), waiters.splice(0).forEach((w) => w(r)))] });
const nextRecord = () => new Promise<RequestRecord>((resolve) => waiters.push(resolve));

/** Starts a request and destroys it once the first `bytes` bytes of the response body have arrived. */
function leaveAfter(
  path: string,
  bytes: number,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(path, mock().url),
      {
        method: init.method ?? 'GET',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...init.headers },
      },
      (res) => {
        let got = 0;
        res.on('data', (d: Buffer) => {
          got += d.length;
          if (got >= bytes) {
            req.destroy();
            resolve(got);
          }
        });
        res.on('end', () => reject(new Error(`the response ended after ${got} bytes, before the client left`)));
      },
    );
    req.on('error', () => {});
    req.end(init.body);
  });
}

test('a client that leaves mid-stream: the stream stops (aborted) and the server keeps serving', async () => {
  const done = nextRecord();
  await leaveAfter('/v1/text-provider/chat/completions', 1, {
    method: 'POST',
    body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'long answer' }] }),
    headers: { 'x-mock-pacing': 'ttft=0; tps=20' },
  });
  const record = await done;
  assert.equal([record.status, record.stream], [200, 'aborted']);
  await assertHealthy(mock());
});

test('a client that leaves mid-download of a large file: the server keeps serving', async () => {
  const done = nextRecord();
  await leaveAfter('/media/videos/1280x768/16/7.mp4', 1);
  await done;
  await assertHealthy(mock());
});

// A client that closes its side (FIN) looks to the server like one that half-closes to read the answer: it is sent a 400
// incomplete_request, which its record says (test/server/httpEdges.test.ts). One that resets is gone for certain.
test('a client that resets mid-upload: no answer is written (status 0 in the journal) and the server keeps serving', async () => {
  const done = nextRecord();
  const socket = connect(mock().port, '127.0.0.1', () =>
    socket.write(chatHead('Content-Length: 1000\r\n') + '{"model":', () =>
      setImmediate(() => socket.resetAndDestroy()),
    ),
  );
  socket.on('error', () => {});
  const record = await done;
  assert.equal([record.status, record.operation], [0, 'chat.completions']);
  await assertHealthy(mock());
});

test.run();
