import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { ApiError } from '../../src/contract/errors.js';
import { readBody } from '../../src/pipeline/readBody.js';
import { BODY_READ } from '../../src/lib/symbols.js';
import { tick } from '../support/index.js';

/** A stand-in for a request: a stream of body bytes with the given headers. */
function fakeRequest(headers: Record<string, string> = {}) {
  const stream = new PassThrough();
  return Object.assign(stream, { headers }) as unknown as IncomingMessage & PassThrough;
}

/** The error code readBody rejected with, or 'resolved'. */
async function outcome(p: Promise<Buffer>): Promise<string | null> {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    assert.instance(err, ApiError);
    return `${(err as ApiError).status} ${(err as ApiError).code}`;
  }
}

test('a body already buffered (it came with the headers) is taken in one read, without a listener', async () => {
  const req = fakeRequest({ 'content-length': '11' });
  req.write('hello ');
  req.end('world');
  const added: string[] = [];
  req.on('newListener', (event: string) => added.push(event));
  assert.is((await readBody(req, 100)).toString(), 'hello world');
  assert.equal(added, []);
  assert.is((req as unknown as Record<symbol, unknown>)[BODY_READ], true, 'marked as read for the connection tracker');
});

test('a body that comes later: its chunks, joined, and nothing left listening', async () => {
  const req = fakeRequest({ 'content-length': '11' });
  const read = readBody(req, 100);
  await tick();
  req.write('hello ');
  req.end('world');
  assert.is((await read).toString(), 'hello world');
  for (const event of ['data', 'end', 'error', 'aborted']) assert.is(req.listenerCount(event), 0, event);
});

test('one chunk is returned as it came; an empty body is empty', async () => {
  const req = fakeRequest();
  const read = readBody(req, 100);
  await tick();
  req.end('{}');
  assert.is((await read).toString(), '{}');
  const empty = fakeRequest({ 'content-length': '0' });
  const none = readBody(empty, 100);
  empty.end();
  assert.is((await none).length, 0);
});

test('past the limit: 413, and the request is paused for the tracker to discard', async () => {
  const req = fakeRequest();
  const read = readBody(req, 8);
  await tick();
  req.write('12345');
  req.write('67890');
  assert.is(await outcome(read), '413 request_too_large');
  assert.ok(req.isPaused());
  assert.is(req.listenerCount('data'), 0);
});

test('a body shorter than its Content-Length: 400 invalid_content_length', async () => {
  const req = fakeRequest({ 'content-length': '10' });
  const read = readBody(req, 100);
  req.end('short');
  assert.is(await outcome(read), '400 invalid_content_length');
});

test('a client that stops half-way: 400 request_aborted; a request no longer readable: the same', async () => {
  const req = fakeRequest({ 'content-length': '100' });
  const read = readBody(req, 1000);
  req.write('{"a":');
  await tick();
  req.emit('aborted');
  assert.is(await outcome(read), '400 request_aborted');
  const gone = fakeRequest();
  gone.destroy();
  assert.is(await outcome(readBody(gone, 100)), '400 request_aborted');
});

test('a stream error is passed on as it is (an unexpected error)', async () => {
  const req = fakeRequest();
  const read = readBody(req, 100);
  await tick();
  const boom = new Error('boom');
  req.emit('error', boom);
  try {
    await read;
    assert.unreachable('should reject');
  } catch (err) {
    assert.is(err, boom);
  }
});

test.run();
