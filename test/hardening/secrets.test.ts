// Keys presented by clients never come back: not in responses, error messages, /v1/me or the journal.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { get, post, request, useMock, wholeResponse, type Res } from '../support/index.js';

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
    await post(
      url,
      '/text-provider/chat/completions',
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
      `${SECRET} `,
    ),
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

test('a key the client puts in the path, x-request-id, the body or a quoted value never reaches the journal', async () => {
  const url = mock().url;
  await request(url, '/__admin/requests', { method: 'DELETE', key: null });
  const chat = '/text-provider/chat/completions';
  const messages = [{ role: 'user', content: 'hi' }];
  await request(url, `/${SECRET}`, { key: null });
  await request(url, `/v1/${SECRET.replace('-', '%2D')}`, { key: null }); // percent-encoded
  await request(url, `/${'x'.repeat(250)}${SECRET}`, { key: null }); // across the point where long paths are cut
  await get(url, '/v1/me', SECRET, { 'x-request-id': SECRET });
  await post(url, chat, { model: SECRET, messages }, SECRET);
  await post(url, chat, { model: `gpt-4o ${SECRET}`, messages }, SECRET);
  await post(url, '/text-provider/images/generations', { model: 'dall-e-3', prompt: 'p', size: SECRET }, SECRET);
  await post(url, chat, { model: 'gpt-4o', messages }, SECRET, { 'x-mock-fault': `status=503;${SECRET}` });
  const journal = await get(url, '/__admin/requests', null);
  assert.is(journal.json.data.length, 8);
  assert.not.ok(journal.text.includes(SECRET), journal.text.slice(0, 2000));
  // Each field still says what was sent, with the key masked.
  const [path, encoded, long, id, model] = journal.json.data as { path: string; requestId: string; model: string }[];
  assert.is(path!.path, '/sk-l...CRET');
  assert.is(encoded!.path, '/v1/sk-l...CRET');
  assert.ok(long!.path.startsWith(`/${'x'.repeat(250)}sk-l`));
  assert.match(id!.requestId, /^req_[0-9a-f]{32}$/, 'an id that holds a key is replaced, not echoed');
  assert.is(model!.model, 'sk-l...CRET');
  const details = JSON.stringify(journal.json.data.map((e: { details?: unknown }) => e.details ?? null));
  assert.match(details, /sk-l\.\.\.CRET/, 'details quote the masked key');
});

test('/v1/me names the caller by its masked key only', async () => {
  const me = await get(mock().url, '/v1/me', SECRET);
  assert.is(me.json.label, 'sk-l...CRET');
  assert.not.ok(me.text.includes(SECRET));
});

test.run();
