import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BUFFERING_SHOWS_AFTER_CHUNKS,
  BUFFERING_SHOWS_AFTER_MS,
  checkChatStream,
  parseSse,
} from '../../src/verdict/sse.js';

const chunk = (delta: object, finish: string | null = null, id = 'c1') =>
  `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const good =
  chunk({ role: 'assistant', content: '' }) + chunk({ content: 'Hi' }) + chunk({}, 'stop') + 'data: [DONE]\n\n';
// A reply long enough for its delivery to be judged: a model makes its tokens steps apart.
const tokens = (n: number) =>
  chunk({ role: 'assistant', content: '' }) +
  Array.from({ length: n }, (_, i) => chunk({ content: ` t${i}` })).join('') +
  chunk({}, 'stop') +
  'data: [DONE]\n\n';
const long = tokens(BUFFERING_SHOWS_AFTER_CHUNKS);
const ok = () => undefined;
const check = (text: string, reads?: number[], ms = 300) => checkChatStream(Buffer.from(text), reads, ms, ok);

test('parseSse: blank-line events, joined data lines, comments, CRLF, event names, trailing bytes', () => {
  const { events, trailing } = parseSse(
    ': comment\r\nevent: x\r\ndata: a\r\ndata: b\r\n\r\ndata:c\n\nid: 1\n\ndata: partial',
  );
  assert.equal(events, [{ data: 'a\nb', event: 'x' }, { data: 'c' }]);
  assert.is(trailing, 'data: partial');
});

test('a well-formed stream delivered in two reads passes', () => {
  const first = chunk({ role: 'assistant', content: '' }).length;
  assert.equal(check(long, [first, long.length - first]), []);
  assert.equal(check(long), [], 'without read records only the grammar is checked');
});

test('each grammar rule is reported', () => {
  assert.match(check(good + 'data: [DONE]\n\n').join(), /exactly one 'data: \[DONE\]', found 2/);
  assert.match(check(good.replace('data: [DONE]\n\n', '')).join(), /found 0/);
  assert.match(check(good + chunk({ content: 'late' })).join(), /events follow/);
  assert.match(check(good + 'garbage').join(), /does not end with a blank line/);
  assert.match(check(good.replace('"role":"assistant",', '')).join(), /first chunk does not carry the role/);
  assert.match(check(good.replace('"finish_reason":"stop"', '"finish_reason":null')).join(), /found 0/);
  assert.match(
    check(chunk({ role: 'assistant' }, 'stop') + chunk({}, 'stop') + 'data: [DONE]\n\n').join(),
    /one chunk with a finish_reason, found 2/,
  );
  assert.match(
    check(chunk({ role: 'assistant' }) + chunk({}, 'stop', 'c2') + 'data: [DONE]\n\n').join(),
    /share one id/,
  );
  assert.match(check('data: {broken\n\n' + good).join(), /not JSON/);
  assert.match(check('data: [DONE]\n\n').join(), /no chunk/);
  assert.match(checkChatStream(Buffer.from(good), undefined, 300, () => 'bad chunk').join(), /chunk schema: bad chunk/);
});

test('incremental delivery: one read, or the first event only in the last read, fails', () => {
  assert.match(check(long, [long.length]).join(), /one read/);
  assert.match(check(long, [10, long.length - 10]).join(), /first event did not arrive before the end/);
  assert.match(check(long, [long.length], BUFFERING_SHOWS_AFTER_MS).join(), /one read, 100 ms after the request/);
});

test('a stream that arrives whole sooner than buffering could show is not judged on its delivery', () => {
  // A fast upstream (the mock unpaced) sends a short stream within a few milliseconds: one read or many.
  assert.equal(check(long, [long.length], BUFFERING_SHOWS_AFTER_MS - 1), []);
  assert.equal(check(long, [10, long.length - 10], 5), []);
  assert.match(
    check(long + 'data: [DONE]\n\n', [long.length + 14], 5).join(),
    /found 2/,
    'the grammar is judged however fast',
  );
});

test('a reply of fewer tokens than buffering could show in is not judged on its delivery, however long it took', () => {
  // A one-token reply from a real model: role, token and finish leave together at the first token.
  assert.equal(check(good, [good.length], 400), []);
  const short = tokens(BUFFERING_SHOWS_AFTER_CHUNKS - 1);
  assert.equal(check(short, [short.length], 400), []);
  // Chunks with no content (the role's, the finish) do not count.
  assert.match(check(long, [long.length], 400).join(), /one read, 400 ms after the request/);
});

test.run();
