import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../src/contract/errors.js';
import { keyStates } from '../../src/domain/keys.js';
import { authenticate, isLoopback } from '../../src/pipeline/auth.js';
import { assertError, get, KEY, withMock } from '../support/index.js';

test('loopback addresses are recognised; others are not', () => {
  for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) assert.ok(isLoopback(a), a);
  for (const a of [undefined, '', '10.0.0.5', '::ffff:10.0.0.5', '0.0.0.0', '::', '128.0.0.1', 'fe80::1', '127.0.0.1.evil']) assert.not.ok(isLoopback(a), String(a));
});

/** Runs the auth middleware on an admin operation as if a client at `peer` had called it. */
async function adminCall(adminToken: string | undefined, peer: string, authorization = ''): Promise<ApiError | 'passed'> {
  const mw = authenticate(keyStates([{ key: KEY }]), adminToken);
  const ctx = { req: { headers: { authorization }, socket: { remoteAddress: peer } } };
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
  for (const auth of ['', `Bearer ${KEY}`, `Bearer ${token}x`, token, `Basic ${token}`]) {
    const res = await adminCall(token, '127.0.0.1', auth);
    assert.instance(res, ApiError, auth);
    assert.is((res as ApiError).status, 403);
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

test.run();
