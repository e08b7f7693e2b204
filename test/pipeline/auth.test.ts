import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../src/contract/errors.js';
import { keyStates } from '../../src/domain/keys.js';
import { authenticate, checkKey } from '../../src/pipeline/auth.js';
import { operations, pathsOf } from '../../src/contract/operations.js';
import { assertError, KEY, request, useMock, VALID } from '../support/index.js';

const mock = useMock(test);

/** Every operation that needs an API key, on its written path with path parameters filled in. */
const keyed = operations.filter((op) => op.auth === 'key').map((op) => ({ op, path: op.path.replace(/:\w+/g, 'x') }));

const BAD_AUTH: [string, string | undefined, string | null][] = [
  ['missing header', undefined, null],
  ['Basic scheme', `Basic ${Buffer.from(`user:${KEY}`).toString('base64')}`, 'invalid_auth_scheme'],
  ['bare token, no scheme', KEY, 'invalid_auth_scheme'],
  ['empty token', 'Bearer ', null],
  ['scheme only', 'Bearer', null],
  ['unknown key', 'Bearer sk-not-a-real-key', 'invalid_api_key'],
  ['key with a typo', `Bearer ${KEY}x`, 'invalid_api_key'],
];

test('every keyed operation (the 7 documented ones included) answers 401 + WWW-Authenticate: Bearer for each bad credential', async () => {
  const { url } = mock();
  assert.ok(keyed.filter(({ op }) => op.documented).length === 7, 'all seven documented operations need a key');
  for (const { op, path } of keyed) {
    for (const [what, authorization, code] of BAD_AUTH) {
      const res = await request(url, path, {
        method: op.method,
        body: op.method === 'POST' ? VALID[op.id] : undefined,
        key: null,
        headers: { authorization },
      });
      assertError(res, 401, null);
      assert.is(res.json.error.code, code, `${op.id} / ${what}`);
      assert.match(String(res.headers['www-authenticate']), /^Bearer\b/, `${op.id} / ${what}`);
      assert.is(res.json.error.type, 'invalid_request_error');
    }
  }
});

test('401 messages tell the user what to send, and never echo the token', async () => {
  const { url } = mock();
  const missing = await request(url, '/v1/me', { key: null });
  assert.match(missing.json.error.message, /Authorization header using Bearer auth/);
  const empty = await request(url, '/v1/me', { key: null, headers: { authorization: 'Bearer   ' } });
  assert.match(empty.json.error.message, /bearer token is empty/);
  const secret = 'sk-guess-0123456789abcdef';
  const wrong = await request(url, '/v1/me', { key: secret });
  assert.is(wrong.json.error.message, 'Incorrect API key provided.');
  assert.not.ok(wrong.text.includes(secret));
});

test('the auth check comes before the body is read', async () => {
  const { url } = mock();
  const res = await request(url, '/text-provider/chat/completions', { method: 'POST', raw: '{bad', key: 'nope' });
  assertError(res, 401, null);
});

test('a valid key is accepted with any case of the scheme and surrounding spaces, on both path forms', async () => {
  const { url } = mock();
  for (const authorization of [`Bearer ${KEY}`, `bearer ${KEY}`, `BEARER ${KEY}  `, `Bearer   ${KEY}`]) {
    const res = await request(url, '/v1/me', { key: null, headers: { authorization } });
    assert.is(res.status, 200, authorization);
  }
  const me = pathsOf(operations.find((o) => o.id === 'me')!);
  assert.equal(me, ['/v1/me']);
});

test('media links need no key', async () => {
  const { url } = mock();
  const res = await request(url, '/media/images/1024x1024/1.png', { key: null });
  assert.is(res.status, 200);
});

test('checkKey: the key for a bearer token in any case of the scheme, else the 401 that fits (returned, not thrown)', () => {
  const keys = keyStates([{ key: 'abc-key' }, { key: 'other-key' }]);
  assert.is(checkKey(keys, 'Bearer abc-key'), keys[0]);
  assert.is(checkKey(keys, 'bearer  other-key '), keys[1]);
  assert.is(checkKey(keys, 'Bearer \tabc-key\t'), keys[0]);
  // Only HTTP's blanks surround a token: a no-break space (what String.prototype.trim also strips) is part of it.
  const codes = [
    undefined,
    '',
    'Bearer',
    'Bearer  ',
    'Token abc-key',
    'abc-key',
    'Bearer abc-ke',
    'Bearer abc-key\u00a0',
    'Bearer \u00a0abc-key',
  ].map((h) => {
    const got = checkKey(keys, h);
    if (!(got instanceof ApiError)) return 'accepted';
    assert.is(got.status, 401);
    assert.match(String(got.headers['WWW-Authenticate']), /^Bearer\b/);
    return got.code;
  });
  assert.equal(codes, [
    null,
    null,
    null,
    null,
    'invalid_auth_scheme',
    'invalid_auth_scheme',
    'invalid_api_key',
    'invalid_api_key',
    'invalid_api_key',
  ]);
});

test('authenticate refuses to start without any key', () => {
  assert.throws(() => authenticate([]), /at least one API key/);
});

test.run();
