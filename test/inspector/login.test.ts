// The inspector in a browser with --admin-token: GET /__admin/?token=TOKEN once sets an HttpOnly session
// cookie (an HMAC of the token under a per-process key) and redirects to the page without the token; the
// cookie then opens the page, its feed and the admin API; a change made with the cookie must come from the
// page's own origin (CSRF). The token never comes back: not in a response, a Location, or a log line.
import { request as httpRequest } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningMock } from '../../src/server/server.js';
import { get, request, withLoggedMock, type Res } from '../support/index.js';

const TOKEN = 'inspector-login-token-42';

/** A mock with the admin token, logging every request to a capture. */
const loggedAdmin = (fn: (mock: RunningMock, log: string[]) => Promise<void>): Promise<void> =>
  withLoggedMock({ adminToken: TOKEN, logLevel: 'info' }, (mock, out) => fn(mock, out.lines));

/** Everything a response shows a client: status line fields, every header, the body. */
const everything = (res: Res): string => `${res.status}\n${res.rawHeaders.join('\n')}\n${res.text}`;

/** Logs in with the token and returns the `name=value` pair of the cookie it set. */
async function login(url: string): Promise<{ res: Res; cookie: string }> {
  const res = await get(url, `/__admin/?token=${encodeURIComponent(TOKEN)}`, null);
  const set = String(res.headers['set-cookie'] ?? '');
  return { res, cookie: set.split(';')[0]! };
}

/** The first bytes of GET /__admin/requests/events with these headers: its status and whether `ready` came. */
function feed(url: string, headers: Record<string, string>): Promise<{ status: number; ready: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/__admin/requests/events`, { headers }, (res) => {
      let text = '';
      const done = () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, ready: text.includes('event: ready') });
      };
      if (res.statusCode !== 200) return void res.resume().on('end', done);
      res.on('data', (c: Buffer) => {
        text += c.toString();
        if (text.includes('event: ready')) done();
      });
    });
    req.on('error', reject);
    req.end();
  });
}

test('GET /__admin/?token=TOKEN: 303 to /__admin/ with an HttpOnly, SameSite=Strict cookie that is not the token', () =>
  loggedAdmin(async (mock) => {
    const { res, cookie } = await login(mock.url);
    assert.is(res.status, 303);
    assert.is(res.headers.location, '/__admin/', 'the token is not carried on');
    assert.is(res.headers['referrer-policy'], 'no-referrer');
    assert.is(res.headers['cache-control'], 'no-store');
    const set = res.headers['set-cookie']!;
    assert.is(set.length, 1);
    const port = new URL(mock.url).port;
    assert.match(
      set[0]!,
      new RegExp(`^uam_admin_${port}=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=/__admin$`),
    );
    assert.not.match(set[0]!, /Secure/, 'plain HTTP: a Secure cookie would be refused');
    assert.not.ok(everything(res).includes(TOKEN), 'the token is nowhere in the answer');
    // The alias without the slash logs in too.
    const alias = await get(mock.url, `/__admin?token=${TOKEN}`, null);
    assert.is(alias.status, 303);
    assert.is(alias.headers['set-cookie']![0]!.split(';')[0], cookie, 'the same session');
  }));

test('a wrong token: 403 in the error envelope, no cookie, the token not echoed', () =>
  loggedAdmin(async (mock) => {
    for (const wrong of [`${TOKEN}x`, TOKEN.slice(0, -1), '', 'sk-mock-default']) {
      const res = await get(mock.url, `/__admin/?token=${encodeURIComponent(wrong)}`, null);
      assert.is(res.status, 403, wrong);
      assert.is(res.json.error.code, 'admin_forbidden');
      assert.is(res.headers['set-cookie'], undefined, 'no cookie');
      if (wrong) assert.not.ok(everything(res).includes(wrong), 'the sent token is not echoed');
    }
  }));

test('the cookie opens the page, its script, the feed, the API and the body endpoint (GET)', () =>
  loggedAdmin(async (mock) => {
    const { cookie } = await login(mock.url);
    const spoken = await request(mock.url, '/voice-provider/tts', { body: { text: 'Hello', voice_id: 'rachel' } });
    for (const path of [
      '/__admin/',
      '/__admin/inspector.js',
      '/__admin/requests',
      '/__admin/faults',
      `/__admin/requests/${String(spoken.headers['x-request-id'])}/body`,
    ]) {
      const res = await get(mock.url, path, null, { cookie: `other=1; ${cookie}` });
      // The page and its script are 404 only when the inspector is not built (npm run build).
      assert.ok(
        res.status === 200 || (res.status === 404 && res.json?.error.code === 'inspector_not_built'),
        `${path}: ${res.status}`,
      );
    }
    assert.equal(await feed(mock.url, { cookie }), { status: 200, ready: true });
    assert.is((await feed(mock.url, {})).status, 403, 'the feed without the cookie');
  }));

test('a forged, stale or misplaced cookie is refused: 403 for the page, the feed and the API', async () => {
  let stale = '';
  await loggedAdmin(async (mock) => {
    stale = (await login(mock.url)).cookie;
  });
  await loggedAdmin(async (mock) => {
    const { cookie } = await login(mock.url);
    const [name, value] = cookie.split('=') as [string, string];
    const forged = [
      `${name}=${TOKEN}`, // the token itself is not the cookie
      `${name}=${value.slice(0, -1)}${value.endsWith('A') ? 'B' : 'A'}`, // one character changed (never the same one)
      `${name}=`,
      `${name}x=${value}`,
      `uam_admin_1=${value}`, // another server's name
      `${name}=${stale.split('=')[1]}`, // an earlier run's cookie: the key died with that process
    ];
    for (const c of forged) {
      for (const path of ['/__admin/', '/__admin/inspector.js', '/__admin/requests']) {
        const res = await get(mock.url, path, null, { cookie: c });
        assert.is(res.status, 403, `${path} with ${c}`);
        assert.is(res.json.error.code, 'admin_forbidden');
      }
      assert.is((await feed(mock.url, { cookie: c })).status, 403, c);
    }
    // The query token opens only the login: on the API it is no credential.
    assert.is((await get(mock.url, `/__admin/requests?token=${TOKEN}`, null)).status, 403);
  });
});

test('a change with the cookie must come from the page: its Origin and x-uam-admin: 1; bearer scripts need no header', () =>
  loggedAdmin(async (mock) => {
    const { cookie } = await login(mock.url);
    const host = new URL(mock.url).host;
    const rule = { id: 'r1', fault: { status: 500 } };
    const add = (headers: Record<string, string>, key: string | null = null) =>
      request(mock.url, '/__admin/faults', { method: 'POST', body: rule, key, headers });
    const foreign = await add({ cookie, 'x-uam-admin': '1', origin: 'http://evil.example' });
    assert.is(foreign.status, 403, 'a foreign Origin');
    assert.is(foreign.json.error.code, 'admin_forbidden');
    assert.is(
      (await add({ cookie, 'x-uam-admin': '1', origin: 'http://127.0.0.1:1' })).status,
      403,
      'same host, another port',
    );
    assert.is((await add({ cookie, 'x-uam-admin': '1', origin: 'null' })).status, 403, 'an opaque origin');
    assert.is((await add({ cookie, origin: `http://${host}` })).status, 403, 'without x-uam-admin');
    assert.is(
      (await request(mock.url, '/__admin/reset', { method: 'POST', key: null, headers: { cookie } })).status,
      403,
      'a bare POST, as a form sends',
    );
    assert.is(
      (
        await request(mock.url, '/__admin/faults', {
          method: 'DELETE',
          key: null,
          headers: { cookie, origin: 'http://evil.example', 'x-uam-admin': '1' },
        })
      ).status,
      403,
    );
    // PUT is a change too (the latency settings).
    const setLatency = (headers: Record<string, string>) =>
      request(mock.url, '/__admin/latency', { method: 'PUT', body: { profile: 'catalogue' }, key: null, headers });
    assert.is((await setLatency({ cookie })).status, 403, 'a bare PUT');
    assert.is((await setLatency({ cookie, 'x-uam-admin': '1', origin: 'http://evil.example' })).status, 403);
    assert.is((await get(mock.url, '/__admin/latency', TOKEN)).json.profile, 'off', 'the latency was not changed');
    assert.is((await setLatency({ cookie, 'x-uam-admin': '1', origin: `http://${host}` })).status, 200, 'the page');
    assert.equal((await get(mock.url, '/__admin/faults', TOKEN)).json.data, [], 'nothing was changed');
    assert.is((await add({ cookie, 'x-uam-admin': '1', origin: `http://${host}` })).status, 201, 'the page itself');
    assert.is(
      (
        await request(mock.url, '/__admin/faults/r1', {
          method: 'DELETE',
          key: null,
          headers: { cookie, 'x-uam-admin': '1' },
        })
      ).status,
      200,
      'no Origin: the header suffices',
    );
    assert.is((await add({}, TOKEN)).status, 201, 'a bearer script (no Origin) needs no x-uam-admin');
    // A foreign Origin says a page sent it: no page of another origin may change state, whatever it holds.
    assert.is((await add({ origin: 'http://evil.example' }, TOKEN)).status, 403, 'a bearer call from a foreign page');
  }));

test('the token never reaches the request log: not from a login, a wrong login, or a bearer call', () =>
  loggedAdmin(async (mock, log) => {
    await login(mock.url);
    await get(mock.url, `/__admin?token=${TOKEN}&x=1`, null);
    await get(mock.url, `/__admin/?token=${encodeURIComponent(`${TOKEN}-wrong`)}`, null);
    await get(mock.url, `/__admin/?token=${TOKEN.toUpperCase()}`, null);
    await get(mock.url, '/__admin/requests', TOKEN);
    await get(mock.url, `/v1/models?token=${TOKEN}`);
    const text = log.join('\n');
    assert.ok(log.length >= 5, text);
    assert.ok(
      log.some((l) => l.includes('"path":"/__admin/"') && l.includes('"status":303')),
      text,
    );
    assert.not.ok(text.toLowerCase().includes(TOKEN.toLowerCase()), text);
    assert.not.ok(text.includes('token='), text);
  }));

test.run();
