import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../src/contract/errors.js';
import { keyStates } from '../../src/domain/keys.js';
import { operations } from '../../src/contract/operations.js';
import { hostCheck, hostName, isLoopbackName } from '../../src/pipeline/adminAccess.js';
import { authenticate, checkKey, isLoopback } from '../../src/pipeline/auth.js';
import { assertError, get, KEY, request, withMock } from '../support/index.js';

test('loopback addresses are recognised; others are not', () => {
  for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) assert.ok(isLoopback(a), a);
  for (const a of [
    undefined,
    '',
    '10.0.0.5',
    '::ffff:10.0.0.5',
    '0.0.0.0',
    '::',
    '128.0.0.1',
    'fe80::1',
    '127.0.0.1.evil',
  ])
    assert.not.ok(isLoopback(a), String(a));
});

/** Runs the auth middleware on an admin operation as if a client at `peer` had called it. */
async function adminCall(
  adminToken: string | undefined,
  peer: string,
  authorization = '',
): Promise<ApiError | 'passed'> {
  const mw = authenticate(keyStates([{ key: KEY }]), { adminToken });
  const ctx = {
    req: { method: 'GET', headers: { authorization, host: '127.0.0.1:4010' }, socket: { remoteAddress: peer } },
  };
  try {
    await mw(ctx as never, { requestId: 'req_test', operation: { auth: 'admin' } } as never);
    return 'passed';
  } catch (err) {
    return err as ApiError;
  }
}

test('without an admin token, only loopback clients reach the admin API', async () => {
  assert.is(await adminCall(undefined, '127.0.0.1'), 'passed');
  const remote = await adminCall(undefined, '192.168.1.20', `Bearer ${KEY}`);
  assert.instance(remote, ApiError);
  assert.is((remote as ApiError).status, 403);
  assert.is((remote as ApiError).code, 'admin_forbidden');
  assert.match((remote as ApiError).message, /--admin-token/);
});

test('with an admin token, the bearer token must be it, from any address', async () => {
  const token = 'admin-secret-1234';
  assert.is(await adminCall(token, '192.168.1.20', `Bearer ${token}`), 'passed');
  assert.is(await adminCall(token, '127.0.0.1', `bearer  ${token}`), 'passed');
  for (const auth of ['', `Bearer ${KEY}`, `Bearer ${token}x`, token, `Basic ${token}`, `Bearer\t${token}`]) {
    const res = await adminCall(token, '127.0.0.1', auth);
    assert.instance(res, ApiError, auth);
    assert.is((res as ApiError).status, 403);
  }
});

test('the admin token and the API keys read Authorization by one rule: what one accepts, so does the other', async () => {
  const token = 'admin-secret-1234';
  const keys = keyStates([{ key: token }]);
  for (const [auth, ok] of [
    [`Bearer ${token}`, true],
    [`bearer \t ${token} \t`, true],
    [`BEARER ${token}`, true],
    [`Bearer\t${token}`, false],
    [`Bearer${token}`, false],
    [`Bearer ${token}\u00a0`, false],
    [`Bearer ${token} x`, false],
    ['Bearer ', false],
  ] as const) {
    assert.is(await adminCall(token, '127.0.0.1', auth), ok ? 'passed' : await adminCall(token, '127.0.0.1', ''), auth);
    assert.is(!(checkKey(keys, auth) instanceof ApiError), ok, auth);
  }
});

test('over HTTP: a 403 envelope without the token, the admin API with it; API keys do not open it', async () => {
  await withMock({ adminToken: 'admin-secret-1234' }, async ({ url }) => {
    assertError(await get(url, '/__admin/requests', null), 403);
    assertError(await get(url, '/__admin/requests', KEY), 403);
    const ok = await get(url, '/__admin/requests', 'admin-secret-1234');
    assert.is(ok.status, 200);
    assert.is(ok.json.object, 'list');
  });
});

// DNS rebinding: a page on a domain that resolves to 127.0.0.1 is a loopback client; its requests carry
// that domain as Host. CSRF: a page of another origin can send a form or a no-cors fetch to loopback.

test('a Host header names this machine only by a loopback name, with or without its port', () => {
  assert.is(hostName('LocalHost:4010'), 'localhost');
  assert.is(hostName('[::1]:4010'), '[::1]');
  assert.is(hostName('127.0.0.1'), '127.0.0.1');
  // Anything after the brackets but a port, a second port, brackets or blanks in a name: no host at all.
  for (const h of [
    '[::1]evil.com',
    '[::1]:80evil',
    '[::1].evil.com',
    'localhost:80:80',
    'local[host]',
    'a b',
    'x@localhost',
  ])
    assert.is(hostName(h), undefined, h);
  for (const n of ['localhost', '127.0.0.1', '127.255.0.9', '[::1]']) assert.ok(isLoopbackName(n), n);
  for (const n of [
    '127.0.0.1.evil.example',
    '127.0.0.256',
    '0.0.0.0',
    'localhost.evil.example',
    'evil-localhost',
    '[::2]',
    '10.0.0.1',
    '',
  ]) {
    assert.not.ok(isLoopbackName(n), n);
  }
});

test('the Host check takes the public URL host and the allowed names (*.NAME: subdomains only)', () => {
  const ok = hostCheck('https://mock.example.com/base', ['dev.test', '*.corp.example']);
  for (const h of [
    'localhost:4010',
    '127.0.0.1',
    '[::1]:9',
    'mock.example.com',
    'MOCK.example.com:443',
    'dev.test:4010',
    'a.corp.example',
    'a.b.corp.example:1',
    undefined,
  ]) {
    assert.ok(ok(h), String(h));
  }
  for (const h of [
    '[::1]evil.com',
    '[::1]:4010evil.com',
    '127.0.0.1:80:80',
    'rebind.example:4010',
    'corp.example',
    'xcorp.example',
    'dev.test.evil.example',
    'example.com',
    'evil.mock.example.com',
  ])
    assert.not.ok(ok(h), h);
  assert.not.ok(hostCheck(undefined)('mock.example.com'));
});

/** Every admin route as a request a test can send: path parameters filled in. */
const ADMIN_ROUTES = operations
  .filter((op) => op.auth === 'admin')
  .map((op) => ({ method: op.method, path: op.path.replace(/:\w+/g, 'x1'), id: op.id }));

test('without an admin token, a foreign Host is refused on every admin route, the page and its feed, naming --allowed-host', async () => {
  assert.ok(
    ADMIN_ROUTES.some((r) => r.id === 'admin.requests.events') && ADMIN_ROUTES.some((r) => r.id === 'admin.inspector'),
  );
  await withMock({}, async ({ url }) => {
    for (const { method, path } of ADMIN_ROUTES) {
      const res = await request(url, path, {
        method,
        key: null,
        headers: { host: `rebind.example:${new URL(url).port}` },
      });
      assertError(res, 403);
      assert.is(res.json.error.code, 'admin_forbidden', `${method} ${path}`);
      assert.match(res.json.error.message, /--allowed-host/);
    }
  });
});

test('the keyed API, the health check and media links answer any Host', async () => {
  await withMock({}, async ({ url }) => {
    assert.is((await get(url, '/v1/me', KEY, { host: 'rebind.example' })).status, 200);
    assert.is((await get(url, '/__health', null, { host: 'mock-service:4010' })).status, 200);
  });
});

test('loopback names, the public URL host and --allowed-host names reach the admin API', async () => {
  await withMock(
    { publicUrl: 'http://mock.internal:8080', allowedHosts: ['dev.test', '*.corp.example'] },
    async ({ url }) => {
      const port = new URL(url).port;
      for (const host of [
        `localhost:${port}`,
        `127.0.0.1:${port}`,
        `127.3.4.5:${port}`,
        '[::1]',
        'mock.internal:8080',
        'dev.test',
        `ci.corp.example:${port}`,
      ]) {
        const res = await get(url, '/__admin/requests', null, { host });
        assert.is(res.status, 200, host);
      }
      assertError(await get(url, '/__admin/requests', null, { host: 'corp.example' }), 403);
    },
  );
});

test('with an admin token, the token is the guard and any Host is accepted', async () => {
  await withMock({ adminToken: 'admin-secret-1234' }, async ({ url }) => {
    assert.is((await get(url, '/__admin/requests', 'admin-secret-1234', { host: 'mock-service:4010' })).status, 200);
    assertError(await get(url, '/__admin/requests', null, { host: 'mock-service:4010' }), 403);
  });
});

/** The rules added so far, read by a script. */
const ruleCount = async (url: string): Promise<number> => (await get(url, '/__admin/faults', null)).json.data.length;

test('a cross-site change is refused: a forged reset, a form post, a foreign Origin or Sec-Fetch-Site', async () => {
  // A key with one request a minute: a reset would give it back.
  await withMock({ keys: [{ key: KEY, rateLimit: { requests: 1 } }] }, async ({ url }) => {
    assert.is((await get(url, '/v1/me')).status, 200);
    assert.is((await get(url, '/v1/me')).status, 429);
    const forged: { headers: Record<string, string | undefined>; raw?: string; status: number }[] = [
      // The issue as reported: a "simple" cross-site request with a text/plain body.
      { headers: { origin: 'http://evil.example', 'content-type': 'text/plain' }, raw: 'x', status: 403 },
      // Another port of this machine is another origin (the same site, though).
      { headers: { origin: 'http://127.0.0.1:5173', 'sec-fetch-site': 'same-site' }, status: 403 },
      { headers: { origin: 'null' }, status: 403 },
      // A browser that sends no Origin but says where the request came from.
      { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' }, status: 403 },
      // A simple body without any Origin (an old browser, or a header stripped on the way): not JSON, so refused.
      { headers: { 'content-type': 'application/x-www-form-urlencoded' }, raw: 'a=1', status: 400 },
      { headers: { 'content-type': 'text/plain;charset=UTF-8' }, raw: '{}', status: 400 },
      { headers: { 'content-type': 'multipart/form-data; boundary=x' }, raw: '--x--', status: 400 },
      { headers: { 'content-type': undefined }, raw: 'bytes without a type', status: 400 },
    ];
    for (const { headers, raw, status } of forged) {
      const res = await request(url, '/__admin/reset', {
        method: 'POST',
        key: null,
        headers,
        ...(raw === undefined ? {} : { raw }),
      });
      assertError(res, status);
      const add = await request(url, '/__admin/faults', {
        method: 'POST',
        key: null,
        headers,
        raw: raw ?? JSON.stringify({ fault: { status: 500 } }),
      });
      assert.ok(add.status === 403 || add.status === 400, `${JSON.stringify(headers)}: ${add.status}`);
      // A body-less DELETE with no Origin is what a script sends: only the browser-marked ones are tried.
      if (status === 403)
        assertError(await request(url, '/__admin/faults', { method: 'DELETE', key: null, headers }), 403);
    }
    assert.is(await ruleCount(url), 0);
    assert.is((await get(url, '/v1/me')).status, 429, 'no forged request reset the rate limit');
  });
});

test('scripts without an Origin, and the page of this origin, still change state', async () => {
  await withMock(
    { keys: [{ key: KEY, rateLimit: { requests: 1 } }], publicUrl: 'https://mock.example.com' },
    async ({ url }) => {
      assert.is((await get(url, '/v1/me')).status, 200);
      assert.is(
        (await request(url, '/__admin/reset', { method: 'POST', key: null })).status,
        200,
        'curl -X POST, no body',
      );
      assert.is((await get(url, '/v1/me')).status, 200, 'the reset gave the allowance back');
      assert.is(
        (await request(url, '/__admin/faults', { body: { id: 'r1', fault: { status: 500 } }, key: null })).status,
        201,
      );
      const own = { origin: url, 'sec-fetch-site': 'same-origin', 'x-uam-admin': '1' };
      assert.is(
        (
          await request(url, '/__admin/reset', {
            method: 'POST',
            key: null,
            headers: { ...own, 'content-type': 'text/plain;charset=UTF-8' },
            raw: '',
          })
        ).status,
        200,
      );
      assert.is((await request(url, '/__admin/faults/r1', { method: 'DELETE', key: null, headers: own })).status, 200);
      // Behind a proxy that rewrites Host, the page's origin is the public URL's.
      const proxied = { origin: 'https://mock.example.com', 'x-uam-admin': '1' };
      assert.is((await request(url, '/__admin/reset', { method: 'POST', key: null, headers: proxied })).status, 200);
      // A link to the inspector followed from another site is a navigation: it opens.
      assert.is(
        (await get(url, '/__admin/', null, { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' })).status,
        200,
      );
    },
  );
});

test.run();
