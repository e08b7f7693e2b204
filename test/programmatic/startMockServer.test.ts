import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError } from '../../src/domain/config.js';
import { RuleError } from '../../src/domain/faults/rules.js';
import { startMockServer, type MockServer } from '../../src/server/programmatic.js';

/**
 * Sends one chat completion with the mock's key; returns the status, the reply text (if any) and the answering rule.
 */
async function chat(mock: MockServer, content: string, init: { key?: string; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${mock.openaiBaseURL}/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${init.key ?? mock.apiKey}`,
      'content-type': 'application/json',
      ...init.headers,
    },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
  });
  const body = (await res.json()) as { choices?: { message: { content: string } }[]; error?: { code: string } };
  return {
    status: res.status,
    text: body.choices?.[0]?.message.content,
    code: body.error?.code,
    rule: res.headers.get('x-mock-reply-rule'),
  };
}

async function throws(fn: () => unknown, type: new (...args: never[]) => Error, message: RegExp): Promise<void> {
  try {
    await fn();
  } catch (err) {
    assert.instance(err, type);
    assert.match((err as Error).message, message);
    return;
  }
  assert.unreachable('should have thrown');
}

const basics = suite('startMockServer');
let mock: MockServer;
basics.before(async () => {
  mock = await startMockServer();
});
basics.after(() => mock.close());
basics.after.each(() => {
  mock.clearFaultRules();
  mock.clearReplyRules();
  mock.clearRequests();
  mock.reset();
});

basics('listens on a free loopback port and names its key and base URLs', async () => {
  assert.match(mock.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.is.not(mock.port, 0);
  assert.is(mock.url, `http://127.0.0.1:${mock.port}`);
  assert.is(mock.openaiBaseURL, `${mock.url}/text-provider`);
  assert.is(mock.apiKey, 'sk-mock-default');
  assert.equal(
    mock.keys.map((k) => k.label),
    ['default', 'limited'],
  );
  assert.is(mock.config.logLevel, 'info');
  assert.equal(await chat(mock, 'ping'), { status: 200, text: 'pong', code: undefined, rule: 'ping' });
});

basics('a fault rule faults the next matching request, then lists, removes and clears', async () => {
  const rule = mock.addFaultRule({
    match: { operation: 'chat.completions' },
    fault: { status: 429, retryAfter: 0.01 },
    times: 1,
  });
  assert.is(rule.id, 'rule-1');
  assert.equal(rule.state, { matched: 0, fired: 0, remaining: 1 });
  assert.is((await chat(mock, 'ping')).status, 429);
  assert.is((await chat(mock, 'ping')).status, 200);
  assert.equal(mock.faultRules()[0]!.state, { matched: 1, fired: 1, remaining: 0 });
  mock.addFaultRule({ id: 'down', fault: { status: 503 } });
  assert.ok(mock.removeFaultRule('down'));
  assert.not.ok(mock.removeFaultRule('down'));
  assert.is(mock.clearFaultRules(), 1);
  assert.equal(mock.faultRules(), []);
});

basics('a stored fault rule is a copy: changing the object afterwards changes nothing', async () => {
  const rule = { fault: { status: 500 }, times: 1 as number | undefined };
  mock.addFaultRule(rule);
  rule.fault.status = 404;
  rule.times = undefined;
  assert.equal(mock.faultRules()[0]!.fault, { status: 500 });
  assert.is(mock.faultRules()[0]!.times, 1);
});

basics('a bad fault rule throws a RuleError whose message names the field', async () => {
  await throws(
    () => mock.addFaultRule({ match: { operation: 'chat' }, fault: { status: 500 } }),
    RuleError,
    /^invalid fault rule: match\.operation: Unknown operation 'chat'/,
  );
  await throws(
    () => mock.addFaultRule({ fault: { status: 200 } }),
    RuleError,
    /^invalid fault rule: .*'fault\.status'/,
  );
  mock.addFaultRule({ id: 'x', fault: { status: 500 } });
  await throws(
    () => mock.addFaultRule({ id: 'x', fault: { status: 500 } }),
    RuleError,
    /^invalid fault rule: id: .*already exists/,
  );
});

basics('reset gives the limited key its allowance back and fault rules their first state', async () => {
  const limited = mock.keys.find((k) => k.label === 'limited')!;
  for (let i = 0; i < limited.rateLimit!.requests; i++)
    assert.is((await chat(mock, 'ping', { key: limited.key })).status, 200);
  assert.is((await chat(mock, 'ping', { key: limited.key })).code, 'rate_limit_exceeded');
  mock.addFaultRule({ fault: { status: 500 }, times: 1 });
  assert.is((await chat(mock, 'ping')).status, 500);
  assert.is((await chat(mock, 'ping')).status, 200);
  mock.reset();
  assert.is((await chat(mock, 'ping', { key: limited.key })).status, 500);
  assert.is((await chat(mock, 'ping', { key: limited.key })).status, 200);
});

basics('added reply rules answer before the built-in ones, in the order added, until cleared', async () => {
  const stored = mock.addReplyRule({ id: 'pong-override', match: { exact: 'ping' }, reply: 'PONG!' });
  assert.equal(stored, { id: 'pong-override', match: { exact: 'ping' }, reply: 'PONG!' });
  mock.addReplyRule({ id: 'second', match: { contains: 'pi' }, reply: 'second' });
  assert.equal(await chat(mock, 'ping'), { status: 200, text: 'PONG!', code: undefined, rule: 'pong-override' });
  assert.is((await chat(mock, 'pi?')).text, 'second');
  assert.is((await chat(mock, 'anything', { headers: { 'x-mock-reply-rule': 'second' } })).text, 'second');
  assert.is(mock.clearReplyRules(), 2);
  assert.is(mock.clearReplyRules(), 0);
  assert.equal(await chat(mock, 'ping'), { status: 200, text: 'pong', code: undefined, rule: 'ping' });
  assert.is((await chat(mock, 'anything', { headers: { 'x-mock-reply-rule': 'second' } })).code, 'unknown_reply_rule');
});

basics('a bad reply rule throws an Error naming the field, and adds nothing', async () => {
  const bad = (rule: unknown) => () => mock.addReplyRule(rule as never);
  await throws(
    bad({ id: 'r', match: {}, reply: 'x' }),
    Error,
    /^invalid reply rule: match: needs at least one of exact, contains, regex$/,
  );
  await throws(
    bad({ id: 'has space', match: { exact: 'a' }, reply: 'x' }),
    Error,
    /^invalid reply rule: id: must be 1 to 64 letters, digits, '\.', '_' or '-'$/,
  );
  await throws(bad({ id: 'r', match: { exact: 'a' } }), Error, /^invalid reply rule: missing key 'reply'$/);
  await throws(
    bad({ id: 'r', match: { regex: '(' }, reply: 'x' }),
    Error,
    /^invalid reply rule: match\.regex: not a valid regular expression/,
  );
  await throws(bad(undefined), Error, /^invalid reply rule: expected an object/);
  // Every problem at once: the schema's and the regular expression's.
  await throws(
    bad({ id: 'r', match: { regex: '(' }, colour: 1 }),
    Error,
    /^invalid reply rule: missing key 'reply'; unknown key 'colour'; match\.regex: not a valid regular expression/,
  );
  mock.addReplyRule({ id: 'r', match: { exact: 'a' }, reply: 'x' });
  await throws(
    bad({ id: 'r', match: { exact: 'b' }, reply: 'y' }),
    Error,
    /^invalid reply rule: id: a rule with id "r" was already added$/,
  );
  assert.is((await chat(mock, 'b')).rule, 'default');
  assert.is(mock.clearReplyRules(), 1);
});

basics('requests() reads the journal and clearRequests() empties it', async () => {
  await chat(mock, 'ping');
  await chat(mock, 'ping', { key: 'sk-wrong' });
  const entries = mock.requests();
  assert.equal(
    entries.map((e) => [e.operation, e.status]),
    [
      ['chat.completions', 200],
      ['chat.completions', 401],
    ],
  );
  assert.is(entries[0]!.path, '/text-provider/chat/completions');
  assert.is(mock.clearRequests(), 2);
  assert.equal(mock.requests(), []);
});

basics.run();

const lifecycle = suite('startMockServer options and close');

lifecycle('options are the configuration; undefined fields count as absent', async () => {
  const custom = await startMockServer({ keys: [{ key: 'sk-one', label: 'one' }], clock: 1, log: false });
  await custom.close();
  assert.is(custom.apiKey, 'sk-one');
  assert.is(custom.config.clock, 1);
  const unset = await startMockServer({ keys: undefined, port: undefined, clock: undefined });
  await unset.close();
  assert.is(unset.apiKey, 'sk-mock-default');
  assert.is(unset.config.clock, 1767225600);
  assert.is.not(unset.port, 0);
});

lifecycle(
  "a key's name, written name or label (its old spelling): /v1/me's name and a rule's match.key; label is the masked key",
  async () => {
    const m = await startMockServer({
      keys: [
        { key: 'sk-old-spelling-1', label: 'team-old', scopes: [] },
        { key: 'sk-new-spelling-2', name: 'team-new', scopes: [] },
      ],
    });
    try {
      assert.equal(
        m.keys.map((k) => [k.name, k.label]),
        [
          ['team-old', 'team-old'],
          ['team-new', 'team-new'],
        ],
      );
      m.addFaultRule({ match: { key: 'team-old' }, fault: { status: 503 } });
      m.addFaultRule({ match: { key: 'team-new' }, fault: { status: 502 } });
      for (const [key, name, status] of [
        ['sk-old-spelling-1', 'team-old', 503],
        ['sk-new-spelling-2', 'team-new', 502],
      ] as const) {
        const me = await fetch(`${m.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
        assert.is(me.status, status, `${name}: the rule matched by the name`);
      }
      m.clearFaultRules();
      const me = (await (
        await fetch(`${m.url}/v1/me`, { headers: { authorization: 'Bearer sk-old-spelling-1' } })
      ).json()) as { name: string; label: string };
      assert.is(me.name, 'team-old');
      assert.is(me.label, 'sk-o...ng-1');
      assert.throws(
        () => m.addFaultRule({ match: { key: 'nobody' }, fault: { status: 500 } }),
        /has the name 'nobody'/,
      );
    } finally {
      await m.close();
    }
  },
);

lifecycle('bad options reject with a ConfigError naming the field', async () => {
  await throws(() => startMockServer({ port: -1 }), ConfigError, /port: .*>= 0, but got -1/);
  await throws(() => startMockServer({ bogus: true } as never), ConfigError, /bogus/);
  await throws(() => startMockServer({ faultRules: [{ fault: { status: 99 } }] }), ConfigError, /faultRules\[0\]/);
});

lifecycle('close ends the server once; calling it again is harmless', async () => {
  const m = await startMockServer();
  const url = m.url;
  await m.close();
  await m.close();
  await throws(() => fetch(`${url}/v1/me`), TypeError, /fetch failed/);
});

lifecycle('Symbol.asyncDispose closes the server', async () => {
  const m = await startMockServer();
  await m[Symbol.asyncDispose]();
  await throws(() => fetch(`${m.url}/v1/me`), TypeError, /fetch failed/);
});

lifecycle.run();
