import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  cachedCounts,
  countChatPromptTokens,
  countChatPromptTokensPaused,
  countMessageTokens,
  countMessageTokensPaused,
  TOKENS_PER_TURN,
  countTokens,
  decode,
  decodePieces,
  encode,
  loadSteps,
} from '../../src/text/tokenizer.js';

// Expected ids below are copied from the OpenAI cookbook "How to count tokens with tiktoken"
// (sections 3-5), which printed them from the reference tiktoken implementation.

test('"hello world" is 2 tokens in both encodings', () => {
  assert.is(countTokens('hello world', 'o200k_base'), 2);
  assert.is(countTokens('hello world', 'cl100k_base'), 2);
});

test('token ids match the cookbook', () => {
  assert.equal(encode('tiktoken is great!', 'o200k_base'), [83, 8251, 2488, 382, 2212, 0]);
  assert.equal(encode('antidisestablishmentarianism', 'cl100k_base'), [519, 85342, 34500, 479, 8997, 2191]);
  assert.equal(encode('antidisestablishmentarianism', 'o200k_base'), [493, 129901, 376, 160388, 21203, 2367]);
  assert.equal(encode('2 + 2 = 4', 'cl100k_base'), [17, 489, 220, 17, 284, 220, 19]);
  assert.equal(encode('2 + 2 = 4', 'o200k_base'), [17, 659, 220, 17, 314, 220, 19]);
  assert.equal(
    encode('お誕生日おめでとう', 'cl100k_base'),
    [33334, 45918, 243, 21990, 9080, 33334, 62004, 16556, 78699],
  );
  assert.equal(encode('お誕生日おめでとう', 'o200k_base'), [8930, 9697, 243, 128225, 8930, 17693, 4344, 48669]);
});

test('countTokens agrees with encode().length', () => {
  const text = 'Déjà vu 🎉 — 日本語のテキスト, and some code: `x => x * 2`.';
  for (const enc of ['o200k_base', 'cl100k_base'] as const) {
    assert.is(countTokens(text, enc), encode(text, enc).length);
  }
});

test('decode round-trips text, including multi-byte characters', () => {
  const text = 'Hello, 世界! 👨‍👩‍👧‍👦 café\n\nnew paragraph';
  for (const enc of ['o200k_base', 'cl100k_base'] as const) {
    assert.is(decode(encode(text, enc), enc), text);
  }
});

test('special-token text in user input is counted as ordinary text, not rejected', () => {
  const tokens = encode('a <|endoftext|> b', 'o200k_base');
  assert.ok(tokens.length > 3);
  assert.is(decode(tokens, 'o200k_base'), 'a <|endoftext|> b');
});

test('a prefix ending mid-character decodes to U+FFFD without leaking into the next decode', () => {
  // cl100k splits 誕 into two tokens: bytes e8 aa | 95 (cookbook section 5).
  const tokens = encode('お誕生日おめでとう', 'cl100k_base');
  assert.is(decode(tokens.slice(0, 2), 'cl100k_base'), 'お\uFFFD');
  // gpt-tokenizer's own decode keeps the dangling bytes in a shared decoder and prints 誕 here.
  assert.is(decode([83], 'cl100k_base'), 't');
});

test('decodePieces never splits a character and joins to the decoded text', () => {
  const tokens = encode('お誕生日おめでとう', 'cl100k_base');
  const pieces = decodePieces(tokens, 'cl100k_base');
  assert.equal(
    pieces.map((p) => p.text),
    ['お', '誕', '生', '日', 'お', 'め', 'で', 'とう'],
  );
  assert.equal(
    pieces.map((p) => p.tokens),
    [1, 2, 1, 1, 1, 1, 1, 1],
  );
  assert.is(
    pieces.reduce((sum, p) => sum + p.tokens, 0),
    tokens.length,
  );
});

test('unknown token ids and unknown encodings throw', () => {
  assert.throws(() => decode([10_000_000], 'o200k_base'), /not an ordinary o200k_base token/);
  assert.throws(() => countTokens('x', 'p50k_base' as never), /unknown encoding/);
});

const cookbookMessages = [
  {
    role: 'system',
    content: 'You are a helpful, pattern-following assistant that translates corporate jargon into plain English.',
  },
  { role: 'system', name: 'example_user', content: 'New synergies will help drive top-line growth.' },
  { role: 'system', name: 'example_assistant', content: 'Things working well together will increase revenue.' },
  {
    role: 'system',
    name: 'example_user',
    content: "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage.",
  },
  {
    role: 'system',
    name: 'example_assistant',
    content: "Let's talk later when we're less busy about how to do better.",
  },
  { role: 'user', content: "This late pivot means we don't have time to boil the ocean for the client deliverable." },
];

test('chat prompt count matches the API numbers printed in the cookbook', () => {
  // Cookbook section 6: 129 prompt tokens for gpt-3.5-turbo / gpt-4 (cl100k), 124 for gpt-4o / gpt-4o-mini (o200k).
  assert.is(countChatPromptTokens(cookbookMessages, 'cl100k_base'), 129);
  assert.is(countChatPromptTokens(cookbookMessages, 'o200k_base'), 124);
});

test('chat prompt count: empty conversation is the 3 priming tokens; a name adds its tokens + 1', () => {
  assert.is(countChatPromptTokens([], 'o200k_base'), 3);
  // "user" and "hi" are one token each: 3 (priming) + 3 (message) + 1 + 1.
  assert.is(countChatPromptTokens([{ role: 'user', content: 'hi' }], 'o200k_base'), 8);
  assert.is(
    countChatPromptTokens([{ role: 'user', content: 'hi', name: 'bob' }], 'o200k_base'),
    8 + countTokens('bob', 'o200k_base') + 1,
  );
});

test('message counts are kept per encoding and stay exact', () => {
  const text = 'お誕生日おめでとう — a message long enough to be kept';
  const short = 'お誕生日おめでとう'; // under 16 characters: kept in the map of short texts
  const before = cachedCounts('o200k_base');
  for (let i = 0; i < 3; i++) {
    for (const t of [text, short]) {
      assert.is(countMessageTokens(t, 'o200k_base'), countTokens(t, 'o200k_base'));
      assert.is(countMessageTokens(t, 'cl100k_base'), countTokens(t, 'cl100k_base'));
    }
  }
  for (const t of [text, short])
    assert.is.not(countTokens(t, 'o200k_base'), countTokens(t, 'cl100k_base'), 'the encodings differ on this text');
  assert.equal(cachedCounts('o200k_base'), { long: before.long + 1, short: before.short + 1 }, 'each kept once');
  countMessageTokens('x'.repeat(1_000_001), 'o200k_base');
  assert.is(cachedCounts('o200k_base').long, before.long + 1, 'huge texts are counted, not kept');
  for (let i = 0; i < 5000; i++)
    assert.is(countMessageTokens(`n ${i}`, 'o200k_base'), countTokens(`n ${i}`, 'o200k_base'));
  assert.ok(cachedCounts('o200k_base').short <= 4096, 'short texts are bounded in entries too');
  const history = Array.from({ length: 5000 }, (_, i) => ({
    role: 'user',
    content: `message number ${i} of a long history`,
  }));
  const total = countChatPromptTokens(history, 'o200k_base');
  assert.is(countChatPromptTokens(history, 'o200k_base'), total);
  assert.is(
    total,
    3 + history.reduce((n, m) => n + 3 + countTokens(m.role, 'o200k_base') + countTokens(m.content, 'o200k_base'), 0),
  );
  assert.ok(cachedCounts('o200k_base').long <= 4096, 'bounded in entries');
});

test('a long count pauses every TOKENS_PER_TURN tokens and comes to exactly the count at once, long pieces included', async () => {
  const texts = [
    Array.from({ length: 6000 }, (_, i) => `word${(i * 7919) % 10007} and`).join(' '),
    'x'.repeat(40_000), // one long piece, counted in slices as countTokens does
    'お誕生日おめでとう '.repeat(3000),
  ];
  for (const enc of ['o200k_base', 'cl100k_base'] as const) {
    for (const text of texts) {
      let pauses = 0;
      const n = await countMessageTokensPaused(text, enc, async () => void pauses++);
      assert.is(n, countTokens(text, enc), text.slice(0, 20));
      assert.is(pauses, Math.floor(n / TOKENS_PER_TURN), `a pause per ${TOKENS_PER_TURN} tokens`);
      assert.is(await countMessageTokensPaused(text, enc, async () => void pauses++), n);
    }
  }
  const messages = [
    { role: 'system', content: texts[0]! },
    { role: 'user', content: texts[2]!, name: 'bob' },
  ];
  assert.is(
    await countChatPromptTokensPaused(messages, 'o200k_base', async () => undefined),
    countChatPromptTokens(messages, 'o200k_base'),
  );
  // Asked to stop past a count, it stops as soon as it is past it, and keeps nothing.
  const stopped = await countMessageTokensPaused(`${texts[0]!} stopped`, 'o200k_base', async () => undefined, 100);
  assert.ok(stopped > 100 && stopped < 120, String(stopped));
  const fresh = [{ role: 'user', content: `${texts[0]!} not counted before` }];
  const prompt = await countChatPromptTokensPaused(fresh, 'o200k_base', async () => undefined, 1000);
  assert.ok(prompt > 1000 && prompt < 1100, String(prompt));
  // A count kept from before is exact and free: it is taken whole, and the prompt's count stops after that message.
  const kept = await countChatPromptTokensPaused(messages, 'o200k_base', async () => undefined, 1000);
  assert.is(kept, 3 + 3 + countTokens('system', 'o200k_base') + countTokens(texts[0]!, 'o200k_base'));
  // By default a pause is a turn of the event loop: what was due meanwhile runs before the count ends.
  let ran = false;
  setImmediate(() => (ran = true));
  await countMessageTokensPaused(`${texts[0]!} once more`, 'o200k_base');
  assert.ok(ran);
});

test('loadSteps: two steps per encoding, each safe to run again; only o200k_base by default', () => {
  assert.is(loadSteps().length, 2);
  const steps = loadSteps(['o200k_base', 'cl100k_base']);
  assert.is(steps.length, 4);
  for (const step of [...steps, ...steps]) step();
  assert.is(countTokens('hello world', 'o200k_base'), 2);
  assert.is(countTokens('hello world', 'cl100k_base'), 2);
});

test.run();
