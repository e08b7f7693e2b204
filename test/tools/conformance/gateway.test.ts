import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { looksSecret, parseHeaders, parseRoutes } from '../../../src/tools/conformance/gateway.js';
import { closeSharedMock, runCli, runJson, sharedMock } from './harness.js';

const test = suite('conformance: gateways that mount the API elsewhere (--route, --header)');

test.after(closeSharedMock);

/**
 * An OpenAI-compatible gateway in front of the mock: it serves chat at /v1/chat/completions only (and
 * GET /v1/me), and only for requests that carry `x-route: mock`; anything else is a 404.
 */
async function gateway(): Promise<{ url: string; seen: () => string[]; close(): Promise<void> }> {
  const upstream = new URL((await sharedMock()).url);
  const seen: string[] = [];
  const paths: Record<string, string> = {
    '/v1/chat/completions': '/text-provider/chat/completions',
    '/v1/me': '/v1/me',
  };
  const server = createServer((req, res) => {
    const path = paths[(req.url ?? '').split('?')[0]!];
    seen.push(`${req.method} ${req.url} ${String(req.headers['x-route'])}`);
    if (!path || req.headers['x-route'] !== 'mock')
      return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no route"}');
    const up = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen: () => seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

test('with --route and --header the chat cases pass through a gateway that serves chat at /v1/chat/completions; without either they fail', async () => {
  const g = await gateway();
  try {
    const routed = await runJson(g.url, [
      '--only',
      'chat',
      '--route',
      'chat.completions=/v1/chat/completions',
      '--header',
      'x-route: mock',
    ]);
    assert.is(routed.code, 0, routed.failed.join(', '));
    assert.ok(routed.report.summary.passed > 100, `${routed.report.summary.passed} chat cases passed`);
    assert.ok(
      g.seen().every((line) => /^(POST \/v1\/chat\/completions|GET \/v1\/me)\S* mock$/.test(line)),
      'every request went to the routed path with the header',
    );
    const unrouted = await runJson(g.url, ['--only', 'chat.minimal', '--header', 'x-route:mock']);
    assert.is(unrouted.code, 1);
    assert.equal(unrouted.failed, ['chat.minimal']);
    const headerless = await runJson(g.url, [
      '--only',
      'chat.minimal',
      '--route',
      'chat.completions=/v1/chat/completions',
    ]);
    assert.is(headerless.code, 1);
    assert.equal(headerless.failed, ['chat.minimal']);
  } finally {
    await g.close();
  }
});

test('--route applies to the probe of GET /v1/me too, and keeps --path-prefix', async () => {
  const { url } = await sharedMock();
  // The mock serves /v1/me; routed elsewhere, the probe and the me cases go there (a 404), routed back, they pass.
  const away = await runJson(url, ['--only', 'me.valid', '--route', 'me=/nowhere/me']);
  assert.equal(away.failed, ['me.valid']);
  const back = await runJson(url, ['--only', 'me.valid', '--route', 'me=/me', '--path-prefix', '/v1']);
  assert.is(back.code, 0, back.failed.join(', '));
});

test('a secret-looking --header value is masked in every report; a plain one is shown', async () => {
  const { url } = await sharedMock();
  const secret = 'pk-route-0123456789abcdef';
  const out = await runCli([
    '--base-url',
    url,
    '--api-key',
    'sk-mock-default',
    '--only',
    'me.valid',
    '--header',
    `x-portkey-api-key:${secret}`,
    '--header',
    'x-portkey-provider:openai',
    '--reporter',
    'json',
  ]);
  assert.is(out.code, 0, out.stderr);
  assert.not.ok(out.stdout.includes('route-0123'), 'the secret header is masked');
  assert.match(out.stdout, /"x-portkey-api-key": "pk-r\.\.\.cdef"/);
  assert.match(out.stdout, /"x-portkey-provider": "openai"/);
});

test('--route and --header usage errors name the option, the valid operation ids, and never echo a value', async () => {
  const { url } = await sharedMock();
  const base = ['--base-url', url, '--api-key', 'sk-mock-default'];
  const badOp = await runCli([...base, '--route', 'chat=/v1/chat/completions']);
  assert.is(badOp.code, 2);
  assert.match(badOp.stderr, /--route must be OPERATION=PATH, with OPERATION one of chat\.completions, .*me/);
  const badPath = await runCli([...base, '--route', 'chat.completions=v1/chat']);
  assert.is(badPath.code, 2);
  assert.match(badPath.stderr, /--route chat\.completions=PATH needs a path that starts with '\/'/);
  const auth = await runCli([...base, '--header', 'Authorization: Bearer sk-other-0123456789']);
  assert.is(auth.code, 2);
  assert.match(auth.stderr, /--header may not set Authorization.*use --api-key/);
  assert.not.ok(auth.stderr.includes('sk-other'));
  const noColon = await runCli([...base, '--header', 'x-route']);
  assert.is(noColon.code, 2);
  assert.match(noColon.stderr, /--header must be NAME:VALUE/);
});

test('parseRoutes, parseHeaders and looksSecret', () => {
  assert.equal(parseRoutes(['chat.completions=/v1/chat/completions', 'me=/me']), {
    'chat.completions': '/v1/chat/completions',
    me: '/me',
  });
  assert.throws(() => parseRoutes(['chat.completions=/v1/chat?x=1']), /needs a path/);
  assert.throws(() => parseRoutes(['admin.reset=/x']), /OPERATION one of/);
  assert.equal(parseHeaders(['X-Route: mock', 'accept:a, b']), { 'x-route': 'mock', accept: 'a, b' });
  assert.throws(() => parseHeaders(['x-bad: a\nb']), /control character/);
  assert.throws(() => parseHeaders(['authorization:x']), /Authorization/);
  assert.ok(looksSecret('x-portkey-api-key', 'short'));
  assert.ok(looksSecret('x-trace', 'a1b2c3d4e5f6a7b8c9'));
  assert.not.ok(looksSecret('x-portkey-provider', 'openai'));
  assert.not.ok(looksSecret('accept', 'application/json; charset=utf-8'));
  // A URL is judged by its parts: an upstream address is shown, a credential in any part of it is masked.
  assert.not.ok(looksSecret('x-portkey-custom-host', 'http://127.0.0.1:4010/text-provider'));
  assert.not.ok(looksSecret('x-upstream', 'https://api.example.com/v1'));
  assert.ok(looksSecret('x-upstream', 'https://user:pw@api.example.com/v1'));
  assert.ok(looksSecret('x-upstream', 'https://hooks.example.com/services/T0A1B2C3D4E5F6G7H8'));
  assert.ok(looksSecret('x-upstream', 'https://api.example.com/v1?token=a1b2c3d4e5f6a7b8c9'));
  assert.ok(looksSecret('x-upstream', 'https://a1b2c3d4e5f6a7b8c9.example.com/'));
  assert.ok(looksSecret('x-upstream', 'https://example.com/#a1b2c3d4e5f6a7b8c9'));
  assert.ok(looksSecret('x-upstream', 'http://[a1b2c3d4e5f6a7b8c9'));
});

test.run();
