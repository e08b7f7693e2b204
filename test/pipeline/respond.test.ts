import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { packageLimits } from '../../src/domain/limits.js';
import { responder } from '../../src/pipeline/respond.js';
import { beginResponse } from '../../src/pipeline/requestContext.js';
import type { RequestState } from '../../src/pipeline/steps.js';
import { EventList, type Reply } from '../../src/contract/reply.js';
import { request, waitFor } from '../support/index.js';

/** A Koa app that only writes replies, answering each request with the reply from `replyFor`. */
async function withReplies(
  replyFor: (path: string) => Reply | undefined,
  fn: (url: string) => Promise<void>,
): Promise<void> {
  const app = new Koa();
  const respond = responder(packageLimits().records, 1000);
  app.use(async (ctx) => {
    const reply = replyFor(ctx.path);
    if (!reply) ctx.body = 'left alone';
    // As the pipeline begins every answer: the request's own headers first (requestContext.ts).
    const state = { requestId: 'req_test', reply } as RequestState;
    beginResponse(state);
    await respond(ctx, state);
  });
  const server: Server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

const PNG_BYTES = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);

test('JSON replies: status (200 by default), JSON text, content type and extra headers', async () => {
  await withReplies(
    (path) =>
      ({
        '/plain': { kind: 'json', body: { a: 1, b: 'é' } },
        '/status': { kind: 'json', status: 202, body: { queued: true }, headers: { 'x-extra': 'yes' } },
        '/text': { kind: 'json', body: '{"already":"serialised"}' },
      })[path] as Reply | undefined,
    async (url) => {
      const plain = await request(url, '/plain', { key: null });
      assert.is(plain.status, 200);
      assert.is(plain.headers['content-type'], 'application/json; charset=utf-8');
      assert.is(plain.text, '{"a":1,"b":"é"}');
      const status = await request(url, '/status', { key: null });
      assert.is(status.status, 202);
      assert.is(status.headers['x-extra'], 'yes');
      const text = await request(url, '/text', { key: null });
      assert.is(text.text, '{"already":"serialised"}');
    },
  );
});

test('binary replies: the bytes unchanged, their content type and length, extra headers', async () => {
  await withReplies(
    () => ({
      kind: 'binary',
      contentType: 'image/png',
      body: PNG_BYTES,
      headers: { 'cache-control': 'public, max-age=3600' },
    }),
    async (url) => {
      const res = await request(url, '/img', { key: null });
      assert.is(res.status, 200);
      assert.is(res.headers['content-type'], 'image/png');
      assert.is(res.headers['content-length'], String(PNG_BYTES.length));
      assert.is(res.headers['cache-control'], 'public, max-age=3600');
      assert.ok(res.bytes.equals(PNG_BYTES));
    },
  );
});

test('a stream sends its headers at once, not with the first event: a long time to first token shows a 200 early', async () => {
  // The first event is due in 10 minutes: the headers can only arrive because they are sent before it.
  const reply: Reply = {
    kind: 'sse',
    events: new EventList([{ data: '{"n":1}', tokens: 1 }]),
    ending: 'done',
    pacing: { timeToFirstTokenMs: 600_000, tokensPerSecond: 0 },
    headers: { 'x-extra': 'yes' },
  };
  await withReplies(
    () => reply,
    async (url) => {
      const req = httpRequest(`${url}/stream`);
      let bodyBytes = 0;
      try {
        let head: IncomingMessage | undefined;
        req.on('response', (r) => (head = r));
        req.end();
        // The wait's own bound turns a regression into a failure instead of a ten-minute hang.
        const res = await waitFor('the response headers before the first event', () => head, {
          on: [req, 'response'],
          failOn: [req, 'error'],
        });
        res.on('data', (chunk: Buffer) => void (bodyBytes += chunk.length));
        assert.is(res.statusCode, 200);
        assert.is(res.headers['content-type'], 'text/event-stream; charset=utf-8');
        assert.is(res.headers['cache-control'], 'no-cache');
        assert.is(res.headers['x-extra'], 'yes');
        // The request's own headers go out in the same head, before the stream's.
        assert.match(String(res.headers['x-request-id']), /^req_/);
        assert.is(res.headers['x-content-type-options'], 'nosniff');
        assert.equal(res.rawHeaders.filter((_, i) => i % 2 === 0).slice(0, 5), [
          'x-request-id',
          'x-content-type-options',
          'x-extra',
          'content-type',
          'cache-control',
        ]);
        assert.is(bodyBytes, 0);
      } finally {
        req.destroy();
      }
    },
  );
});

test('without a reply the response is left to whoever set it', async () => {
  await withReplies(
    () => undefined,
    async (url) => {
      const res = await request(url, '/none', { key: null });
      assert.is(res.status, 200);
      assert.is(res.text, 'left alone');
    },
  );
});

test.run();
