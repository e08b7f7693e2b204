// Bodies broken in very many places get a 400 of bounded size in bounded time, never a 5xx or an
// exhausted heap.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadLimits } from '../../src/domain/limits.js';
import { assertError, post, request, useMock } from '../support/index.js';
import { assertHealthy } from './raw.js';

const mock = useMock(test);
const chat = '/text-provider/chat/completions';

test('the most wrong array items a body may hold: 400 naming the first, a small answer', async () => {
  // Up to requests.maxJsonValues values in all; more is refused before parsing (test/pipeline/parseBody.test.ts).
  const items = loadLimits().requests.maxJsonValues - 10;
  const raw = `{"model":"gpt-4o","messages":[{"role":"user","content":"a"}],"stop":[${'1,'.repeat(items - 1)}1]}`;
  const res = await request(mock().url, chat, { method: 'POST', raw });
  assertError(res, 400, 'stop[0]');
  assert.ok(res.bytes.length < 16 * 1024, `${res.bytes.length} bytes`);
  await assertHealthy(mock());
});

test('thousands of violations: every one counted, the first 100 listed', async () => {
  const res = await post(mock().url, chat, { model: 'gpt-4o', messages: Array.from({ length: 3000 }, () => 7) });
  assertError(res, 400, 'messages[0]');
  assert.is(res.json.error.details.length, 100);
  assert.match(res.json.error.message, /\(2999 more; details lists the first 100\)$/);
});

test('a few violations: all listed', async () => {
  const res = await post(mock().url, chat, { model: 7, messages: [] });
  assertError(res, 400);
  assert.is(res.json.error.details.length, 2);
  assert.match(res.json.error.message, /\(1 more in details\)$/);
});

test('a value nested too deeply to print in a message: 400, not 500, refused before parsing', async () => {
  const deep = '['.repeat(20_000) + ']'.repeat(20_000);
  const res = await request(mock().url, '/text-provider/images/generations', {
    method: 'POST',
    raw: `{"model":"dall-e-3","prompt":"x","size":${deep}}`,
  });
  assertError(res, 400, null);
  assert.is(res.json.error.code, 'nesting_too_deep');
});

test.run();
