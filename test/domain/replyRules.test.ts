import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadReplyRules } from '../../src/domain/replyRules.js';
import { selectReply } from '../../src/text/replies.js';
import { ConfigError } from '../../src/domain/config.js';
import { start } from '../../src/server/server.js';
import { KEY, pathOf, post, schemas } from '../support/index.js';
import { ROOT } from '../../src/lib/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'reply-rules-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** Writes a rules file (an object is written as JSON, a string as it is) and returns its path. */
function file(content: unknown): string {
  const path = join(dir, `rules-${n++}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

/** Asserts that loading the file fails with a ConfigError naming the file and matching the problem. */
function rejects(path: string, problem: RegExp): void {
  try {
    loadReplyRules(schemas(), path);
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.instance(err, ConfigError);
    const message = (err as Error).message;
    assert.ok(message.includes(path), message);
    assert.match(message, problem);
  }
}

test('the built-in rules load and pass their schema', () => {
  const rules = loadReplyRules(schemas());
  assert.ok(rules.some((r) => r.id === 'ping'));
  assert.ok(rules.some((r) => r.id === 'long'));
});

test('a user file goes first: its rule wins over a built-in one for the same message', () => {
  const path = file({ rules: [{ id: 'my-ping', match: { exact: 'ping' }, reply: 'PONG from my file' }] });
  const rules = loadReplyRules(schemas(), path);
  assert.equal(selectReply(rules, { messages: [{ role: 'user', content: 'ping' }], model: 'gpt-4o' }), {
    text: 'PONG from my file',
    ruleId: 'my-ping',
  });
});

test('invalid files: each start-up error names the file and the problem', () => {
  rejects(join(dir, 'missing.json'), /ENOENT|no such file/);
  rejects(file('{"rules": ['), /JSON/);
  rejects(file({ rule: [] }), /unknown key 'rule' in .*; did you mean 'rules'\?/);
  rejects(file({ rules: [{ id: 'x', match: { exact: 'a' } }] }), /missing key 'rules\[0\]\.reply' in /);
  rejects(
    file({ rules: [{ id: 'x', match: { model: 'gpt-4o' }, reply: 'r' }] }),
    /rules\[0\]\.match in .*: needs at least one of exact, contains, regex/,
  );
  rejects(file({ rules: [{ id: 'x', match: { regex: 'a', flags: 'g' }, reply: 'r' }] }), /rules\[0\]\.match\.flags/);
  rejects(
    file({ rules: [{ id: 'x', match: { regex: '(' }, reply: 'r' }] }),
    /rules\[0\]\.match\.regex in .*: not a valid regular expression/,
  );
  // A bad regular expression is told together with the schema's problems, not after they are fixed.
  rejects(
    file({ rules: [{ id: 'x y', match: { regex: '(' }, reply: 'r' }] }),
    /^invalid reply rules:\n {2}rules\[0\]\.id in .*: must be 1 to 64 .*\n {2}rules\[0\]\.match\.regex in .*: not a valid/,
  );
  rejects(
    file({
      rules: [
        { id: 'x', match: { exact: 'a' }, reply: 'r' },
        { id: 'x', match: { exact: 'b' }, reply: 's' },
      ],
    }),
    /rules\[1\]\.id in .*: "x" names an earlier rule too/,
  );
});

test("docs/mock.md's example of a broken rules file is the message the server gives", () => {
  const doc = readFileSync(join(ROOT, 'docs/mock.md'), 'utf8');
  const shown = /```\n(unified-ai-mock: invalid reply rules:\n[\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(shown, 'docs/mock.md shows no broken rules file');
  const path = join(dir, 'rules.json');
  writeFileSync(
    path,
    JSON.stringify({
      rules: [
        { id: 'bad id', match: { regex: '[a-' }, reply: 'x' },
        { id: 'r2', match: {}, reply: 'y' },
      ],
    }),
  );
  try {
    loadReplyRules(schemas(), path);
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.is(`unified-ai-mock: ${(err as Error).message.replaceAll(path, 'rules.json')}\n`, shown);
  }
});

test('start() with replyRules: an invalid file stops start-up, a valid one answers', async () => {
  const bad = file({ rules: [{ id: 'bad id with spaces', match: { exact: 'a' }, reply: 'r' }] });
  try {
    await start({ port: 0, replyRules: bad });
    assert.unreachable('should have thrown');
  } catch (err) {
    assert.instance(err, ConfigError);
    assert.match(
      (err as Error).message,
      new RegExp(`rules\\[0\\]\\.id in ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `),
    );
  }
  const good = file({
    rules: [
      { id: 'weather', match: { regex: 'weather', flags: 'i', model: 'gpt-4o' }, reply: 'Sunny, 21 °C.' },
      { id: 'hi', match: { contains: 'hello' }, reply: 'Hi from my rules.' },
    ],
  });
  const mock = await start({ port: 0, replyRules: good });
  try {
    const chat = (content: string, model = 'gpt-4o', headers: Record<string, string> = {}) =>
      post(mock.url, pathOf('chat.completions'), { model, messages: [{ role: 'user', content }] }, KEY, headers);
    const hit = await chat('What is the WEATHER like?');
    assert.is(hit.json.choices[0].message.content, 'Sunny, 21 °C.');
    assert.is(hit.headers['x-mock-reply-rule'], 'weather');
    assert.is(
      (await chat('What is the weather like?', 'gpt-4o-mini')).headers['x-mock-reply-rule'],
      'default',
      'the model condition holds',
    );
    // "hello" would match the built-in greeting rule; the user's rule comes first.
    assert.is((await chat('hello')).json.choices[0].message.content, 'Hi from my rules.');
    assert.is(
      (await chat('anything', 'gpt-4o', { 'X-Mock-Reply-Rule': 'weather' })).json.choices[0].message.content,
      'Sunny, 21 °C.',
    );
    assert.is(
      (await chat('anything', 'gpt-4o', { 'X-Mock-Reply-Rule': 'long' })).headers['x-mock-reply-rule'],
      'long',
      'built-ins stay available',
    );
  } finally {
    await mock.close();
  }
});

test.run();
