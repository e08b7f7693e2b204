// Keys presented by clients never come back: not in responses, error messages, /v1/me or the journal.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { get, post, request, useMock, wholeResponse, type Res } from '../helpers.js';

const SECRET = 'sk-live-0123456789abcdefSECRET';
const mock = useMock(test, { keys: [{ key: SECRET, label: 'mine' }] });

test('a known key, a near miss and odd schemes: no response and no journal entry carries the key', async () => {
  const url = mock().url;
  const seen: Res[] = [
    await get(url, '/v1/me', SECRET),
    await get(url, `/v1/me?api_key=${SECRET}`, SECRET),
    await get(url, '/v1/me', `${SECRET}x`),
    await get(url, '/v1/me', SECRET.slice(0, -1)),
    await request(url, '/v1/me', { key: null, headers: { authorization: `Basic ${SECRET}` } }),
    await request(url, '/v1/me', { key: null, headers: { authorization: SECRET } }),
    await request(url, '/v1/me', { key: null, headers: { authorization: `Bearer ${SECRET} ${SECRET}` } }),
    await post(url, '/text-provider/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, `${SECRET} `),
    await post(url, '/text-provider/chat/completions', { model: 'gpt-4o' }, SECRET),
    await request(url, '/v1/me', { method: 'DELETE', key: SECRET }),
  ];
  for (const res of seen) assert.not.ok(wholeResponse(res).includes(SECRET), wholeResponse(res).slice(0, 500));
  const journal = await get(url, '/__admin/requests', null);
  assert.is(journal.status, 200);
  assert.ok(journal.json.data.length >= seen.length);
  assert.not.ok(journal.text.includes(SECRET), journal.text.slice(0, 1000));
  assert.ok(journal.text.includes('sk-l...CRET'), 'the masked key identifies the caller');
});

test('/v1/me names the caller by its masked key only', async () => {
  const me = await get(mock().url, '/v1/me', SECRET);
  assert.is(me.json.label, 'sk-l...CRET');
  assert.not.ok(me.text.includes(SECRET));
});

test.run();
