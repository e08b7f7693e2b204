import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Context } from 'koa';
import { ApiError, ERRORS } from '../../src/contract/errors.js';
import { renderError, type ErrorSink } from '../../src/pipeline/errors.js';
import type { RequestState } from '../../src/pipeline/steps.js';
import { assertError, pathOf, post, request, useMock, VALID } from '../support/index.js';

const reported: { err: unknown; where: Parameters<ErrorSink>[1] }[] = [];
const mock = useMock(test, {}, { report: (err, where) => reported.push({ err, where }) });

/** A stand-in for the parts of a Koa context (and its node:http response) that rendering an error touches. */
function fakeCtx(opts: { headerSent?: boolean } = {}) {
  const headers: Record<string, string | number> = { 'content-disposition': 'attachment' };
  let destroyed = false;
  let body: string | undefined;
  const res = {
    statusCode: 200,
    writableEnded: false,
    socket: { writable: true },
    destroy: () => (destroyed = true),
    setHeader: (name: string, value: string | number) => void (headers[name.toLowerCase()] = value),
    removeHeader: (name: string) => delete headers[name.toLowerCase()],
    end: (text?: string) => void (body = text),
  };
  const ctx = { method: 'POST', url: '/x', headerSent: opts.headerSent ?? false, writable: true, respond: true, res };
  return { ctx, headers, destroyed: () => destroyed, body: () => body };
}

async function render(thrown: unknown, opts: { headerSent?: boolean } = {}) {
  const sink: unknown[] = [];
  const f = fakeCtx(opts);
  const state: RequestState = { requestId: 'req_test', started: 0 };
  renderError(f.ctx as unknown as Context, state, thrown, (err) => sink.push(err));
  const text = f.body();
  return {
    ...f,
    state,
    sink,
    status: f.ctx.res.statusCode,
    text,
    body: typeof text === 'string' ? JSON.parse(text) : undefined,
  };
}

test('an unexpected exception is a 500 envelope without any detail of the error, and it is reported', async () => {
  const m = mock();
  const original = m.services.catalogue.require;
  m.services.catalogue.require = () => {
    throw new Error('secret internals at /srv/app/src/catalogue.ts:42');
  };
  try {
    reported.length = 0;
    const res = await post(m.url, pathOf('images.generate'), VALID['images.generate']);
    assertError(res, 500, null);
    assert.equal(res.json, {
      error: {
        message: 'The server had an error processing your request.',
        type: 'server_error',
        param: null,
        code: null,
      },
    });
    assert.not.match(res.text, /secret|\.ts:|at /);
    assert.is(reported.length, 1);
    assert.match((reported[0]!.err as Error).message, /secret internals/);
    assert.is(reported[0]!.where.method, 'POST');
    assert.is(reported[0]!.where.url, pathOf('images.generate'));
    assert.is(reported[0]!.where.requestId, res.headers['x-request-id']);
  } finally {
    m.services.catalogue.require = original;
  }
  assert.is((await post(m.url, pathOf('images.generate'), VALID['images.generate'])).status, 200);
});

test('a thrown non-Error value is a 500 too', async () => {
  const r = await render('just a string');
  assert.is(r.status, 500);
  assert.is(r.body.error.type, 'server_error');
  assert.equal(r.sink, ['just a string']);
});

test('ApiError: status, envelope, details and extra headers; Content-Disposition is dropped', async () => {
  const details = [{ param: 'a', code: 'invalid_value', message: 'bad a' }];
  const r = await render(
    new ApiError(ERRORS.VALIDATION, { param: 'a', message: 'bad a', details, headers: { 'Retry-After': '3' } }),
  );
  assert.is(r.status, 400);
  assert.is(r.headers['content-type'], 'application/json; charset=utf-8');
  assert.is(r.headers['content-length'], Buffer.byteLength(r.text!));
  assert.equal(r.body, {
    error: { message: 'bad a', type: 'invalid_request_error', param: 'a', code: 'invalid_value', details },
  });
  assert.is(r.headers['retry-after'], '3');
  assert.is(r.headers['content-disposition'], undefined);
  assert.is(r.state.error instanceof ApiError, true);
  assert.equal(r.sink, []);
});

test('once a response has started, the connection is cut instead of writing a second body', async () => {
  const r = await render(new Error('mid-stream'), { headerSent: true });
  assert.ok(r.destroyed());
  assert.is(r.text, undefined);
  assert.is(r.sink.length, 1);
});

test('a client gone before any answer: no envelope, the connection is closed and the record will say 0', async () => {
  const f = fakeCtx();
  f.ctx.writable = false;
  const state: RequestState = { requestId: 'req_test', started: 0 };
  renderError(f.ctx as unknown as Context, state, new ApiError(ERRORS.VALIDATION), () => {});
  assert.ok(f.destroyed());
  assert.is(state.transportStatus, 0);
  assert.is(f.body(), undefined);
});

test('unknown paths are 404 and wrong methods 405 with Allow, both as envelopes with a request id', async () => {
  const { url } = mock();
  for (const path of ['/nope', '/v1/nope', '/text-provider/chat', '/v2/me', '/v1/v1/me']) {
    const res = await request(url, path);
    assertError(res, 404, null);
    assert.is(res.json.error.code, 'not_found');
    assert.match(res.json.error.message, /Unknown path: GET \//);
  }
  const cases: [string, string, RegExp][] = [
    ['GET', '/text-provider/chat/completions', /^POST$/],
    ['PUT', '/v1/text-provider/images/generations', /^POST$/],
    ['DELETE', '/cloud-provider/speech', /^POST$/],
    ['POST', '/v1/me', /\bGET\b/],
    ['PATCH', '/v1/models', /\bGET\b/],
  ];
  for (const [method, path, allow] of cases) {
    const res = await request(url, path, { method });
    assertError(res, 405, null);
    assert.is(res.json.error.code, 'method_not_allowed');
    assert.match(String(res.headers.allow), allow, `${method} ${path}`);
    assert.match(res.json.error.message, new RegExp(`Method ${method} is not allowed`));
  }
});

test('a long unknown path is cut in the message', async () => {
  const { url } = mock();
  const res = await request(url, `/${'a'.repeat(5000)}`);
  assertError(res, 404, null);
  assert.ok(res.json.error.message.length < 300);
});

test.run();
