// The relay's decisions, without the rest of the mock: its step runs in a bare Koa app in front of a real
// loopback upstream (node:http on port 0) that records what reaches it. What is forwarded and what is
// dropped on the way up and down, which operations go upstream at all, the upstream's refusals judged
// against the mock's own, what is recorded, and how a replay answers a hit, a miss and its fallback.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Koa from 'koa';
import { once } from 'node:events';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { boundOperations } from '../../src/app/bindings.js';
import { createServices } from '../../src/app/createServices.js';
import { ApiError, ERRORS } from '../../src/contract/errors.js';
import { EventList, type Reply } from '../../src/contract/reply.js';
import { SchemaRegistry } from '../../src/contract/schemas.js';
import { ConfigError, resolveConfig, type ConfigInput } from '../../src/domain/config.js';
import type { FaultSpec } from '../../src/domain/faults/spec.js';
import type { StreamTimers } from '../../src/pipeline/pacer.js';
import { requestState, STOP, type RequestState, type Step, type StepResult } from '../../src/pipeline/steps.js';
import {
  CASSETTE_VERSION,
  CassetteStore,
  normaliseRequest,
  requestHash,
  type Cassette,
} from '../../src/relay/cassette.js';
import { createRelay, relayed, type Relay } from '../../src/relay/relay.js';
import { pathOf, request, tempDirs, waitFor, type Res } from '../support/index.js';
import { HandTimers } from '../support/timers.js';

const UPSTREAM_KEY = 'sk-upstream-relay-unit-93c1';
const CLIENT_KEY = 'sk-client-relay-unit-51aa';
const PUBLIC = 'http://mock.example';
const op = (id: string) => boundOperations.find((o) => o.id === id)!;
const CHAT_BODY = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] };

/** What the upstream got: one entry per request. */
interface Got {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real upstream on a free loopback port: records each request, answers with `answer`. */
async function upstream(
  answer: (req: IncomingMessage, res: ServerResponse, url: string) => void,
): Promise<{ url: string; got: Got[]; server: Server }> {
  const got: Got[] = [];
  let url = '';
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      answer(req, res, url);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, got, server };
}

/** What the relay's step left: its result and the request's state. */
interface Seen {
  result: StepResult;
  state: RequestState;
}

/** The relay of a configuration, its step in a bare Koa app, and the steps it was handed, which record their calls. */
async function relaying(
  input: ConfigInput,
  fn: (h: {
    url: string;
    relay: Relay;
    calls: string[];
    /** A request for operation `id`, with `fault` as the fault steps would have left it; resolves once answered. */
    call: (
      id: string,
      path: string,
      opts?: Parameters<typeof request>[2],
      fault?: FaultSpec,
    ) => Promise<{ res: Res; seen: Seen }>;
    /** A streamed chat request sent by hand (for one that does not end well); what the client got and how it ended. */
    stream: (fault: FaultSpec) => Promise<{ text: string; how: string }>;
    /** What the step left for the last request, once it has returned. */
    seen: () => Seen | undefined;
  }) => Promise<void>,
  steps: { validate?: Step; handle?: Step; timers?: StreamTimers } = {},
): Promise<void> {
  const schemas = SchemaRegistry.shared();
  const config = resolveConfig({ publicUrl: PUBLIC, keys: [{ key: CLIENT_KEY }], ...input }, schemas);
  const reported: Error[] = [];
  const relay = createRelay(
    config,
    createServices(config, schemas),
    schemas,
    (err) => void reported.push(err as Error),
    steps.timers,
  )!;
  const calls: string[] = [];
  const validate: Step = (ctx, state) => {
    calls.push('validate');
    return steps.validate?.(ctx, state);
  };
  const handle: Step = (ctx, state) => {
    calls.push('handle');
    return steps.handle?.(ctx, state);
  };
  const step = relay.step(validate, handle);
  let operation = '';
  let fault: FaultSpec | undefined;
  let seen: Seen | undefined;
  const app = new Koa();
  app.use(async (ctx) => {
    const chunks: Buffer[] = [];
    for await (const c of ctx.req) chunks.push(c as Buffer);
    const state = requestState('req_relay', op(operation));
    state.faultSpec = fault;
    if (chunks.length) {
      state.raw = Buffer.concat(chunks).toString('utf8');
      state.body = JSON.parse(state.raw) as Record<string, unknown>;
    }
    const result = await step(ctx, state);
    seen = { result, state };
    if (result === STOP) return;
    // The test looks at the reply the step left; the responder that would send it is not under test.
    ctx.status = 204;
  });
  const server = createServer(app.callback()).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    await fn({
      url,
      relay,
      calls,
      call: async (id, path, opts = {}, spec) => {
        operation = id;
        fault = spec;
        seen = undefined;
        const res = await request(url, path, { key: CLIENT_KEY, ...opts });
        return { res, seen: seen! };
      },
      stream: (spec) => {
        operation = 'chat.completions';
        fault = spec;
        seen = undefined;
        return new Promise((resolve) => {
          let text = '';
          const headers = { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' };
          const req = httpRequest(new URL(pathOf('chat.completions'), url), { method: 'POST', headers }, (res) => {
            res.on('data', (c: Buffer) => (text += c.toString('utf8')));
            res.on('end', () => resolve({ text, how: 'ended' }));
            res.on('error', () => resolve({ text, how: 'cut' }));
          });
          req.on('error', () => resolve({ text, how: 'cut' }));
          req.end(JSON.stringify({ ...CHAT_BODY, stream: true }));
        });
      },
      seen: () => seen,
    });
    assert.equal(reported, [], 'nothing reported');
  } finally {
    // A stream a failed test left open (held by a stall) must not keep the run alive.
    server.closeAllConnections();
    server.close();
    await relay.close();
  }
}

/** The reply the step left, of the kind the test expects. */
function replyOf<K extends Reply['kind']>(seen: Seen, kind: K): Extract<Reply, { kind: K }> {
  assert.is(seen.state.reply?.kind, kind);
  return seen.state.reply as Extract<Reply, { kind: K }>;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

const tempDir = tempDirs(test, 'uam-relay-unit-');

test('settings: proxy and replay exclude each other, record needs proxy, and with neither there is no relay', () => {
  const schemas = SchemaRegistry.shared();
  const build = (input: ConfigInput) => {
    const config = resolveConfig(input, schemas);
    return createRelay(config, createServices(config, schemas), schemas, () => undefined);
  };
  assert.is(build({}), undefined);
  assert.throws(
    () => build({ proxy: 'http://127.0.0.1:9', replay: tempDir() }),
    (err: Error) => err instanceof ConfigError && /proxy and replay exclude each other/.test(err.message),
  );
  assert.throws(
    () => build({ record: tempDir() }),
    (err: Error) => err instanceof ConfigError && /record needs proxy/.test(err.message),
  );
  assert.is(build({ proxy: 'http://127.0.0.1:9' })?.mode, 'proxy');
  assert.is(build({ replay: tempDir() })?.mode, 'replay');
});

test('relayed: every keyed operation and the media downloads; never the admin API or the unkeyed pages', () => {
  for (const id of [
    'chat.completions',
    'images.generate',
    'voice.tts',
    'me',
    'models.list',
    'video.get',
    'media.image',
    'media.video',
  ])
    assert.ok(relayed(op(id)), id);
  for (const o of boundOperations.filter(
    (o) => o.auth === 'admin' || (o.auth === 'none' && !o.path.startsWith('/media/')),
  ))
    assert.not.ok(relayed(o), o.id);
});

test("up: the client's headers go on, less its key, cookies, the mock's controls and connection headers; the upstream key instead", async () => {
  const up = await upstream((_req, res) => json(res, 200, { id: 'chatcmpl-1' }));
  try {
    await relaying({ proxy: `${up.url}/`, upstreamKey: UPSTREAM_KEY }, async ({ call, calls }) => {
      const body = JSON.stringify(CHAT_BODY);
      const { seen } = await call('chat.completions', `${pathOf('chat.completions')}?b=2&a=1`, {
        method: 'POST',
        raw: body,
        headers: {
          'content-type': 'application/json',
          cookie: 'session=abc',
          'x-mock-fault': 'status=500',
          prefer: 'respond-async',
          'x-admin-token': 'admin-secret',
          'proxy-authorization': 'Basic eA==',
          'keep-alive': 'timeout=5',
          te: 'trailers',
          'accept-encoding': 'gzip, br',
          'x-mock-reply-rule': 'long',
          'x-custom': 'kept',
        },
      });
      assert.is(seen.result, undefined, 'a whole answer is left for the responder');
      assert.equal(calls, ['validate'], 'the body is validated; the handler does not run');
      assert.is(up.got.length, 1);
      const [got] = up.got;
      assert.is(got!.method, 'POST');
      assert.is(
        got!.url,
        `${pathOf('chat.completions')}?b=2&a=1`,
        'the path and query as sent, the trailing slash of the base dropped',
      );
      assert.is(got!.body, body, 'the exact bytes');
      assert.is(got!.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
      assert.is(got!.headers['accept-encoding'], 'identity', 'bodies come up unencoded, to be judged and recorded');
      assert.is(got!.headers.host, new URL(up.url).host);
      assert.is(got!.headers['x-custom'], 'kept');
      assert.is(got!.headers['x-mock-reply-rule'], 'long');
      assert.is(got!.headers['content-type'], 'application/json');
      for (const name of [
        'cookie',
        'x-mock-fault',
        'prefer',
        'x-admin-token',
        'proxy-authorization',
        'keep-alive',
        'te',
      ])
        assert.is(got!.headers[name], undefined, `${name} is not forwarded`);
      assert.not.match(JSON.stringify(got!.headers), CLIENT_KEY);
    });
  } finally {
    up.server.close();
  }
});

test('up: a media download carries no key, the upstream key included', async () => {
  const up = await upstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(Buffer.from([0x89, 0x50]));
  });
  try {
    await relaying({ proxy: up.url, upstreamKey: UPSTREAM_KEY }, async ({ call }) => {
      const { seen } = await call('media.image', '/media/images/256x256/a.png');
      assert.is(up.got[0]!.headers.authorization, undefined);
      const reply = replyOf(seen, 'binary');
      assert.is(reply.contentType, 'image/png');
      assert.ok(reply.body.equals(Buffer.from([0x89, 0x50])), 'bytes pass as they are');
    });
  } finally {
    up.server.close();
  }
});

test('down: transport and identity headers stay behind, no value holds a key, links to the upstream lead to the mock', async () => {
  const up = await upstream((_req, res, base) =>
    json(
      res,
      200,
      { data: [{ url: `${base}/media/images/256x256/a.png` }], elsewhere: 'http://other.example/x.png' },
      {
        'x-request-id': 'up-req-1',
        'set-cookie': 'up=1',
        'x-upstream': 'yes',
        'x-echo': `Bearer ${UPSTREAM_KEY}`,
        'keep-alive': 'timeout=5',
      },
    ),
  );
  try {
    await relaying({ proxy: up.url, upstreamKey: UPSTREAM_KEY }, async ({ call }) => {
      const { seen } = await call('me', pathOf('me'));
      const reply = replyOf(seen, 'binary');
      const headers = reply.headers ?? {};
      assert.is(reply.status, 200);
      assert.is(reply.contentType, 'application/json');
      assert.is(headers['x-upstream'], 'yes');
      assert.ok(headers['x-echo']?.startsWith('Bearer '), headers['x-echo']);
      assert.not.match(headers['x-echo']!, UPSTREAM_KEY);
      for (const name of [
        'x-request-id',
        'set-cookie',
        'date',
        'content-length',
        'content-type',
        'keep-alive',
        'connection',
        'transfer-encoding',
      ])
        assert.is(headers[name], undefined, `${name} is not relayed`);
      const body = JSON.parse(reply.body.toString('utf8'));
      assert.equal(body, {
        data: [{ url: `${PUBLIC}/media/images/256x256/a.png` }],
        elsewhere: 'http://other.example/x.png',
      });
    });
  } finally {
    up.server.close();
  }
});

test('an operation the relay does not answer gets validate then handle, and nothing goes upstream', async () => {
  const up = await upstream((_req, res) => json(res, 200, {}));
  try {
    await relaying({ proxy: up.url }, async ({ call, calls }) => {
      const { seen } = await call('admin.faults.list', '/__admin/faults', { key: null });
      assert.is(seen.result, undefined);
      assert.equal(calls, ['validate', 'handle']);
      assert.is(up.got.length, 0);
    });
    // A refusal by validate is the answer: the handler does not run.
    const refusal = new ApiError(ERRORS.VALIDATION);
    await relaying(
      { proxy: up.url },
      async ({ call, calls }) => {
        const { seen } = await call('admin.faults.list', '/__admin/faults', { key: null });
        assert.is(seen.result, refusal);
        assert.equal(calls, ['validate']);
      },
      { validate: () => refusal },
    );
  } finally {
    up.server.close();
  }
});

test('an upstream that does not answer is a 502 upstream_unreachable naming the upstream, never its key', async () => {
  const gone = await upstream(() => undefined);
  gone.server.close();
  await once(gone.server, 'close');
  await relaying({ proxy: gone.url, upstreamKey: UPSTREAM_KEY }, async ({ call }) => {
    const { seen } = await call('me', pathOf('me'));
    const err = seen.result as ApiError;
    assert.instance(err, ApiError);
    assert.is(err.status, 502);
    assert.is(err.code, 'upstream_unreachable');
    assert.match(err.message, `The upstream ${gone.url} did not answer`);
    assert.not.match(err.message, UPSTREAM_KEY);
  });
});

test("an upstream's 400 to a body the schema accepts: no departure when the mock refuses it too, a violation when it would answer", async () => {
  const up = await upstream((_req, res) =>
    json(res, 400, {
      error: { message: 'Unknown model.', type: 'invalid_request_error', param: 'model', code: 'model_not_found' },
    }),
  );
  try {
    const body = { method: 'POST', body: { ...CHAT_BODY, model: 'no-such-model' } };
    await relaying(
      { proxy: up.url },
      async ({ call, calls }) => {
        const { seen } = await call('chat.completions', pathOf('chat.completions'), body);
        assert.equal(calls, ['validate', 'handle'], "the mock's handler is asked, on a copy of the state");
        assert.is(seen.state.violations, undefined);
        assert.is(replyOf(seen, 'binary').status, 400);
      },
      { handle: () => new ApiError(ERRORS.MODEL_NOT_FOUND) },
    );
    await relaying({ proxy: up.url }, async ({ call, relay }) => {
      const { seen } = await call('chat.completions', pathOf('chat.completions'), body);
      assert.equal(
        seen.state.violations?.map((v) => v.rule),
        ['response.status'],
      );
      assert.is(replyOf(seen, 'binary').headers?.['x-mock-violations'], '1; response.status');
      assert.equal([relay.stats().exchanges, relay.stats().withViolations], [1, 1]);
    });
  } finally {
    up.server.close();
  }
});

test("record: a whole answer is written as a cassette once close() has waited for it; a busy upstream's is not", async () => {
  let status = 200;
  const up = await upstream((_req, res) =>
    json(res, status, status === 200 ? { id: 'u1', secret: UPSTREAM_KEY } : { error: { message: 'busy' } }),
  );
  const dir = tempDir();
  try {
    await relaying({ proxy: up.url, record: dir, upstreamKey: UPSTREAM_KEY }, async ({ call, relay }) => {
      await call('me', pathOf('me'));
      status = 503;
      await call('models.list', pathOf('models.list'));
      await relay.close();
      assert.equal([relay.stats().recorded, relay.stats().recordFailures], [1, 0]);
    });
    const store = new CassetteStore(dir);
    const hash = requestHash(normaliseRequest(op('me'), 'GET', pathOf('me'), {}, undefined));
    const cassette = (await store.read('me', hash))!;
    assert.ok(cassette, 'the cassette of GET /v1/me');
    assert.is(cassette.upstream, up.url);
    assert.is(cassette.response.status, 200);
    assert.equal(cassette.request, { method: 'GET', path: '/me', headers: {} });
    assert.not.match(JSON.stringify(cassette), UPSTREAM_KEY);
    assert.is(
      await store.read(
        'models.list',
        requestHash(normaliseRequest(op('models.list'), 'GET', pathOf('models.list'), {}, undefined)),
      ),
      undefined,
    );
  } finally {
    up.server.close();
  }
});

/** Writes a cassette for GET /v1/me into `dir`; resolves to its hash. */
async function plantMe(dir: string, response: Cassette['response']): Promise<string> {
  const request = normaliseRequest(op('me'), 'GET', pathOf('me'), {}, undefined);
  const hash = requestHash(request);
  const cassette: Cassette = {
    version: CASSETTE_VERSION,
    hash,
    operation: 'me',
    request,
    upstream: 'http://upstream.example',
    recordedAt: '2026-01-01T00:00:00.000Z',
    response,
  };
  await new CassetteStore(dir).write('me', hash, JSON.stringify(cassette));
  return hash;
}

test('replay, a hit: the recorded answer, its links to the recorded upstream leading to this mock', async () => {
  const dir = tempDir();
  await plantMe(dir, {
    status: 200,
    headers: { 'content-type': 'application/json', 'x-recorded': 'yes' },
    body: { text: '{"avatar":"http://upstream.example/media/a.png"}' },
  });
  await relaying({ replay: dir }, async ({ call, calls, relay }) => {
    const { seen } = await call('me', pathOf('me'));
    const reply = replyOf(seen, 'binary');
    assert.equal(calls, [], 'neither validate nor the handler');
    assert.is(reply.status, 200);
    assert.is(reply.contentType, 'application/json');
    assert.equal(reply.headers, { 'x-recorded': 'yes' });
    assert.is(reply.body.toString('utf8'), `{"avatar":"${PUBLIC}/media/a.png"}`);
    assert.equal([relay.stats().replayed, relay.stats().misses], [1, 0]);
  });
});

test('replay, a stream: the recorded events on the recorded schedule, ending as the recording did', async () => {
  const dir = tempDir();
  const events = [
    { t: 100, data: '{"n":1}' },
    { t: 150, data: '{"n":2}' },
    { t: 400, data: '[DONE]' },
  ];
  await plantMe(dir, { status: 200, headers: { 'content-type': 'text/event-stream' }, events, endMs: 410 });
  await relaying({ replay: dir }, async ({ call }) => {
    const { seen } = await call('me', pathOf('me'));
    assert.equal(seen.state.reply, {
      kind: 'sse',
      events: new EventList([
        { data: '{"n":1}', tokens: 1 },
        { data: '{"n":2}', tokens: 1 },
      ]),
      ending: 'done',
      stopAfter: 2,
      pacing: { timeToFirstTokenMs: 100, tokensPerSecond: 0 },
      schedule: [0, 50, 300],
      headers: {},
    });
  });
  // Cut short when recorded: no [DONE], and the end comes when the recording's did.
  const cut = tempDir();
  await plantMe(cut, {
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    events: events.slice(0, 2),
    endMs: 700,
  });
  await relaying({ replay: cut }, async ({ call }) => {
    const reply = replyOf((await call('me', pathOf('me'))).seen, 'sse');
    assert.is(reply.ending, 'cut');
    assert.is(reply.stopAfter, 2);
    assert.equal(reply.schedule, [0, 50, 600]);
  });
  // With a replay speed set, the events go out at that speed instead of on the schedule.
  await relaying({ replay: cut, replayTps: 50 }, async ({ call }) => {
    const reply = replyOf((await call('me', pathOf('me'))).seen, 'sse');
    assert.equal(reply.pacing, { timeToFirstTokenMs: 100, tokensPerSecond: 50 });
    assert.is(reply.schedule, undefined);
  });
});

test("replay, a miss: a 404 naming the hash and how to record it; with the mock fallback, the mock's own answer", async () => {
  const dir = tempDir();
  await relaying({ replay: dir }, async ({ call, calls, relay }) => {
    const { seen } = await call('me', pathOf('me'));
    const err = seen.result as ApiError;
    const hash = requestHash(normaliseRequest(op('me'), 'GET', pathOf('me'), {}, undefined));
    assert.instance(err, ApiError);
    assert.is(err.status, 404);
    assert.is(err.code, 'cassette_not_found');
    assert.equal(err.headers, { 'x-mock-cassette': hash });
    assert.match(err.message, `No cassette for this me request (hash ${hash}) in ${dir}`);
    assert.match(err.message, '--replay-fallback mock');
    assert.equal(calls, []);
    assert.equal([relay.stats().replayed, relay.stats().misses], [0, 1]);
  });
  await relaying({ replay: dir, replayFallback: 'mock' }, async ({ call, calls, relay }) => {
    const { seen } = await call('me', pathOf('me'));
    assert.is(seen.result, undefined);
    assert.equal(calls, ['validate', 'handle']);
    assert.is(relay.stats().misses, 1);
  });
});

/** An upstream that streams three chat chunks and [DONE], each block in a write of its own. */
const streaming = () =>
  upstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const n of [1, 2, 3]) res.write(`data: {"n":${n}}\n\n`);
    res.end('data: [DONE]\n\n');
  });
const STREAM_BODY = { method: 'POST', body: { ...CHAT_BODY, stream: true } };

test('a stream goes through whole and is recorded event by event', async () => {
  const up = await streaming();
  const dir = tempDir();
  try {
    await relaying({ proxy: up.url, record: dir }, async ({ call, relay }) => {
      const { res, seen } = await call('chat.completions', pathOf('chat.completions'), STREAM_BODY);
      assert.is(seen.result, STOP, 'the relay wrote the answer itself');
      assert.is(seen.state.stream, 'completed');
      assert.is(res.status, 200);
      assert.is(res.text, 'data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n":3}\n\ndata: [DONE]\n\n');
      await relay.close();
      assert.is(relay.stats().recorded, 1);
    });
  } finally {
    up.server.close();
  }
});

test('stream-cut on a relayed stream: the first event, then the connection is cut', async () => {
  const up = await streaming();
  try {
    await relaying({ proxy: up.url }, async ({ stream, seen }) => {
      assert.equal(await stream({ streamCut: 1 }), { text: 'data: {"n":1}\n\n', how: 'cut' });
      const state = await waitFor('the step to return', () => seen()?.state);
      assert.is(state.stream, 'cut');
    });
  } finally {
    up.server.close();
  }
});

test('stall on a relayed stream: held silent on the stream timers for stallMaxMs, then cut', async () => {
  const up = await streaming();
  // Timers that never fire by themselves: the test sees what was asked for, and fires it.
  const timers = new HandTimers();
  try {
    await relaying(
      { proxy: up.url, timeouts: { stallMaxMs: 45_000 } },
      async ({ stream, seen }) => {
        const outcome = stream({ stall: 1 });
        await waitFor('the stall to be armed', () => timers.requested.length === 1);
        assert.is(timers.requested[0], 45_000);
        assert.is(seen(), undefined, 'the stream is held open');
        timers.fire();
        assert.equal(await outcome, { text: 'data: {"n":1}\n\n', how: 'cut' });
        const state = await waitFor('the step to return', () => seen()?.state);
        assert.is(state.stream, 'stalled');
      },
      { timers },
    );
  } finally {
    up.server.close();
  }
});

test.run();
