import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { EXTENSION_KEYWORDS } from '../../src/contract/validators/sources.js';
import { compileRules, DEFAULT_RULE_ID, selectReply, shortenForQuote, type ReplyRule } from '../../src/text/replies.js';
import { countTokens } from '../../src/text/tokenizer.js';

const readJson = (path: string): unknown => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));
const schema = readJson('../../schemas/reply-rules.json') as object;
const builtIns = readJson('../../fixtures/replies.json') as { rules: ReplyRule[] };
// The schemas' own annotations (x-rule, ...) are keywords strict mode must be told of.
const ajv = new Ajv2020({ allErrors: true });
for (const keyword of EXTENSION_KEYWORDS) ajv.addKeyword(keyword);
const validate = ajv.compile(schema);

const user = (content: string) => [{ role: 'user', content }];
const rules = compileRules([
  { id: 'exact', match: { exact: 'ping' }, reply: 'pong' },
  { id: 'gpt4-only', match: { contains: 'weather', model: 'gpt-4o' }, reply: 'Sunny (gpt-4o).' },
  { id: 'sub', match: { contains: 'weather' }, reply: 'It is sunny.' },
  { id: 're', match: { regex: '^what is (\\d+)\\s*\\+\\s*(\\d+)', flags: 'i' }, reply: 'Arithmetic!' },
  { id: 'both', match: { contains: 'alpha', regex: 'beta$' }, reply: 'alpha and beta' },
  { id: 'sub', match: { contains: 'shadowed' }, reply: 'second rule with a duplicate id' },
]);

test('exact matches the whole (trimmed) message only, case-sensitively', () => {
  assert.equal(selectReply(rules, { messages: user('ping'), model: 'm' }), { text: 'pong', ruleId: 'exact' });
  assert.equal(selectReply(rules, { messages: user('  ping\n'), model: 'm' }), { text: 'pong', ruleId: 'exact' });
  assert.is(
    (selectReply(rules, { messages: user('ping pong'), model: 'm' }) as { ruleId: string }).ruleId,
    DEFAULT_RULE_ID,
  );
  assert.is((selectReply(rules, { messages: user('Ping'), model: 'm' }) as { ruleId: string }).ruleId, DEFAULT_RULE_ID);
});

test('substring, regex, and all conditions of a rule must hold', () => {
  assert.equal(selectReply(rules, { messages: user('how is the weather?'), model: 'm' }), {
    text: 'It is sunny.',
    ruleId: 'sub',
  });
  assert.equal(selectReply(rules, { messages: user('What is 12 + 30?'), model: 'm' }), {
    text: 'Arithmetic!',
    ruleId: 're',
  });
  assert.equal(selectReply(rules, { messages: user('alpha then beta'), model: 'm' }), {
    text: 'alpha and beta',
    ruleId: 'both',
  });
  assert.is(
    (selectReply(rules, { messages: user('alpha then gamma'), model: 'm' }) as { ruleId: string }).ruleId,
    DEFAULT_RULE_ID,
  );
});

test('model filter restricts a rule; first matching rule wins', () => {
  assert.is(
    (selectReply(rules, { messages: user('weather?'), model: 'gpt-4o' }) as { ruleId: string }).ruleId,
    'gpt4-only',
  );
  assert.is(
    (selectReply(rules, { messages: user('weather?'), model: 'gpt-4o-mini' }) as { ruleId: string }).ruleId,
    'sub',
  );
});

test('only the LAST user message is matched, not assistant or earlier user turns', () => {
  const messages = [
    { role: 'user', content: 'ping' },
    { role: 'assistant', content: 'pong' },
    { role: 'user', content: 'and the weather?' },
    { role: 'assistant', content: 'ping' },
  ];
  assert.is((selectReply(rules, { messages, model: 'm' }) as { ruleId: string }).ruleId, 'sub');
});

test('a repeated regex test is stable (no lastIndex state)', () => {
  for (let i = 0; i < 3; i++) {
    assert.is((selectReply(rules, { messages: user('what is 1+1'), model: 'm' }) as { ruleId: string }).ruleId, 're');
  }
});

test('header rule id picks a rule directly, ignoring match conditions; first id wins', () => {
  assert.equal(selectReply(rules, { messages: user('anything'), model: 'x', ruleId: 'gpt4-only' }), {
    text: 'Sunny (gpt-4o).',
    ruleId: 'gpt4-only',
  });
  assert.equal(selectReply(rules, { messages: [], model: 'x', ruleId: 'sub' }), {
    text: 'It is sunny.',
    ruleId: 'sub',
  });
  const viaHeader = selectReply(rules, { messages: user('hi'), model: 'x', ruleId: 'default' });
  assert.equal(viaHeader, selectReply(rules, { messages: user('hi'), model: 'x' }));
});

test('unknown header rule id returns an unknown_rule error', () => {
  assert.equal(selectReply(rules, { messages: user('ping'), model: 'm', ruleId: 'nope' }), {
    error: 'unknown_rule',
    ruleId: 'nope',
  });
  assert.equal(selectReply(rules, { messages: user('ping'), model: 'm', ruleId: '' }), {
    error: 'unknown_rule',
    ruleId: '',
  });
});

test('compileRules: bad regex, bad flags and empty match throw with the rule id', () => {
  assert.throws(
    () => compileRules([{ id: 'broken.re', match: { regex: '(unclosed' }, reply: 'x' }]),
    /"broken\.re".*invalid regex/,
  );
  assert.throws(() => compileRules([{ id: 'gflag', match: { regex: 'a', flags: 'g' }, reply: 'x' }]), /"gflag".*flags/);
  assert.throws(() => compileRules([{ id: 'nomatch', match: { model: 'm' }, reply: 'x' }]), /"nomatch"/);
  assert.throws(() => compileRules([{ id: 'empty', match: { exact: 'a' }, reply: '' }]), /"empty"/);
});

const defaultText = (messages: { role: string; content: string }[], model = 'gpt-4o'): string => {
  const r = selectReply([], { messages, model });
  assert.ok('text' in r);
  assert.is((r as { ruleId: string }).ruleId, DEFAULT_RULE_ID);
  return (r as { text: string }).text;
};

test('default reply is deterministic, quotes the last user message, and depends on the conversation', () => {
  const a = defaultText(user('Tell me about the migration patterns of arctic terns'));
  assert.is(defaultText(user('Tell me about the migration patterns of arctic terns')), a);
  assert.ok(a.includes('Tell me about the migration patterns'), a);
  const variants = new Set(
    ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'].map((w) =>
      defaultText(user(w)).replace(/"[^"]*"/, '""'),
    ),
  );
  assert.ok(variants.size > 1, 'sentence choice should vary with the conversation');
  const byModel = new Set(
    ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-3.5-turbo', 'o3', 'o4-mini'].map((m) => defaultText(user('same'), m)),
  );
  assert.ok(byModel.size > 1, 'the model is part of the hash');
});

test('default reply of a repeated conversation: the whole conversation decides it, not its last message alone', () => {
  const last = { role: 'user', content: 'And what next?' };
  const earlier = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'].map((w) => ({
    role: 'user',
    content: w,
  }));
  const replies = earlier.map((m) => defaultText([m, last]));
  // Asked again, in another order, each conversation gets its own reply back.
  for (let i = earlier.length - 1; i >= 0; i--) assert.is(defaultText([earlier[i]!, last]), replies[i]);
  assert.ok(new Set(replies).size > 1, 'conversations ending alike should not all get one reply');
  // A conversation too long to be kept is composed again, to the same reply.
  const long = [{ role: 'user', content: 'x'.repeat(5000) }, last];
  assert.is(defaultText(long), defaultText(long));
});

test('default reply is never empty and stays 30-80 tokens, for any input', () => {
  const cases = [
    [],
    [{ role: 'system', content: 'You are terse.' }],
    user(''),
    user('   \n\t '),
    user('hi'),
    user('word '.repeat(500)),
    user('日本語のテキスト'.repeat(50)),
    user('🎉👨‍👩‍👧‍👦'.repeat(40)),
    user('$& $1 {q} "quoted"'),
  ];
  for (const messages of cases) {
    const text = defaultText(messages);
    const n = countTokens(text, 'o200k_base');
    assert.ok(n >= 30 && n <= 80, `${n} tokens: ${text}`);
    assert.not.match(text, '\uFFFD');
  }
  assert.ok(defaultText(user('$& $1 {q}')).includes('"$& $1 {q}"'), 'replacement patterns must be quoted literally');
});

test('shortenForQuote collapses whitespace and cuts long text on whole code points', () => {
  assert.is(shortenForQuote('  a\n\n b  '), 'a b');
  const long = shortenForQuote('lorem ipsum dolor sit amet consectetur adipiscing elit sed do');
  assert.ok(long.endsWith('...') && Buffer.byteLength(long) <= 48, long);
  assert.not.match(shortenForQuote('😀'.repeat(30)), '\uFFFD');
  assert.is(
    [...shortenForQuote('😀'.repeat(30)).replace('...', '')].every((c) => c === '😀'),
    true,
  );
});

test('schema: built-in fixture is valid; invalid rule files are rejected', () => {
  assert.ok(validate(builtIns), JSON.stringify(validate.errors));
  const bad = (rule: unknown): boolean => validate({ rules: [rule] });
  assert.not.ok(bad({ id: 'x', match: {}, reply: 'r' }), 'empty match');
  assert.not.ok(bad({ id: 'x', match: { model: 'gpt-4o' }, reply: 'r' }), 'model alone');
  assert.not.ok(bad({ id: 'x', match: { exact: 'a', extra: 1 }, reply: 'r' }), 'extra match key');
  assert.not.ok(bad({ id: 'x', match: { exact: 'a' }, reply: 'r', extra: 1 }), 'extra rule key');
  assert.not.ok(bad({ id: 'has space', match: { exact: 'a' }, reply: 'r' }), 'id pattern');
  assert.not.ok(bad({ id: 'x', match: { regex: 'a', flags: 'g' }, reply: 'r' }), 'g flag');
  assert.not.ok(bad({ id: 'x', match: { exact: 'a' }, reply: '' }), 'empty reply');
  assert.not.ok(validate({ rules: [], other: true }), 'extra top-level key');
  assert.ok(bad({ id: 'ok.id-1', match: { regex: 'a', flags: 'iu', model: 'gpt-4o' }, reply: 'r' }));
});

const builtInRules = compileRules(builtIns.rules);
const pick = (content: string) =>
  selectReply(builtInRules, { messages: user(content), model: 'gpt-4o' }) as { text: string; ruleId: string };

test('built-in rules: the prompts users will try', () => {
  assert.equal(pick('ping'), { text: 'pong', ruleId: 'ping' });
  assert.is(pick('Hello there!').ruleId, 'greeting');
  assert.is(pick('hi there').ruleId, 'greeting');
  assert.is(pick('What is 2+2?').text, '2 + 2 = 4.');
  assert.is(pick('what is 2 + 2').ruleId, 'math.2plus2');
  assert.is(pick('Hello, please give me a long answer').ruleId, 'long');
  assert.is(pick('show me some emoji').ruleId, 'unicode');
  assert.is(pick('ship it').ruleId, DEFAULT_RULE_ID);
});

test('built-in long reply is at least 1,200 tokens in both encodings and has paragraphs', () => {
  const long = builtIns.rules.find((r) => r.id === 'long')!.reply;
  assert.ok(countTokens(long, 'o200k_base') >= 1200);
  assert.ok(countTokens(long, 'cl100k_base') >= 1200);
  assert.ok(long.split('\n\n').length >= 5);
});

test('built-in unicode reply contains emoji and CJK (multi-byte token boundaries)', () => {
  const text = builtIns.rules.find((r) => r.id === 'unicode')!.reply;
  assert.match(text, /\p{Extended_Pictographic}/u);
  assert.match(text, /\p{Script=Han}/u);
});

test.run();
