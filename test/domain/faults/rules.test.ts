import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mulberry32 } from '../../../src/lib/prng.js';
import { FaultRules, RuleError, type RequestFacts } from '../../../src/domain/faults/rules.js';
import { loadLimits } from '../../../src/domain/limits.js';
import { resolveConfig, ConfigError } from '../../../src/domain/config.js';
import { schemas } from '../../support/index.js';

const CONTEXT = {
  operations: ['chat.completions', 'images.generate', 'me'],
  keyNames: ['default', 'limited'],
  limits: { maxDelayMs: 1000 },
  maxRules: loadLimits().faults.maxRules,
};
const MAX_RULES = CONTEXT.maxRules;
const rules = () => new FaultRules(schemas(), CONTEXT);
const CHAT: RequestFacts = {
  operation: 'chat.completions',
  keyName: 'default',
  headers: {},
  body: { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true } },
};

function refused(fn: () => unknown, message: RegExp, param: string | null, status = 400): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, RuleError);
    assert.match((err as RuleError).message, message);
    assert.is((err as RuleError).param, param);
    assert.is((err as RuleError).status, status);
    return;
  }
  assert.unreachable('expected a RuleError');
}

test('mulberry32 gives the same sequence for the same seed, in [0, 1)', () => {
  const a = mulberry32(42);
  const b = mulberry32(42);
  const c = mulberry32(43);
  const first = Array.from({ length: 50 }, a);
  assert.equal(Array.from({ length: 50 }, b), first);
  assert.not.equal(Array.from({ length: 50 }, c), first);
  for (const x of first) assert.ok(x >= 0 && x < 1);
});

test('a rule matches on operation, key label, model, header and body fields', () => {
  const r = rules();
  r.add({ id: 'op', match: { operation: ['images.generate'] }, fault: { status: 500 } });
  r.add({ id: 'key', match: { key: 'limited' }, fault: { status: 501 } });
  r.add({ id: 'header', match: { headers: { 'X-Tenant': 'acme' } }, fault: { status: 502 } });
  r.add({
    id: 'body',
    match: { operation: 'chat.completions', model: 'gpt-4o', body: { 'stream_options.include_usage': true } },
    fault: { status: 503 },
  });
  r.add({
    id: 'nested',
    match: { body: { stream_options: { include_usage: true }, stream: true } },
    fault: { status: 504 },
  });
  const pick = (facts: Partial<RequestFacts>) => r.pick({ ...CHAT, ...facts })?.fault.status;
  assert.is(pick({ operation: 'images.generate' }), 500);
  assert.is(pick({ keyName: 'limited' }), 501);
  assert.is(pick({ headers: { 'x-tenant': 'acme' } }), 502);
  assert.is(pick({ headers: { 'x-tenant': ['acme'] } }), 502);
  assert.is(pick({ body: { ...CHAT.body, model: 'gpt-4o' } }), 503);
  assert.is(pick({}), 504);
  assert.is(pick({ body: { stream: true, stream_options: { include_usage: false } } }), undefined);
  assert.is(pick({ body: { stream: true, stream_options: 'x' } }), undefined);
  assert.is(pick({ body: undefined }), undefined);
  assert.is(r.pick({ ...CHAT })?.label, 'status=504 [rule nested]');
});

test('a whole number in a body path indexes a list, from the end when negative', () => {
  const r = rules();
  r.add({ id: 'last', match: { body: { 'messages.-1.content': 'uam-7 ping' } }, fault: { status: 503 } });
  r.add({ id: 'first', match: { body: { 'messages.0.role': 'system' } }, fault: { status: 502 } });
  const pick = (messages: unknown) => r.pick({ ...CHAT, body: { ...CHAT.body, messages } })?.fault.status;
  const user = { role: 'user', content: 'uam-7 ping' };
  assert.is(pick([user]), 503);
  // A message put before the client's (a gateway's system prompt) does not move the last one.
  assert.is(pick([{ role: 'system', content: 'Be brief.' }, user]), 503);
  assert.is(
    pick([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'other' },
    ]),
    502,
  );
  assert.is(pick([{ role: 'user', content: 'other' }]), undefined);
  assert.is(pick([]), undefined);
  assert.is(pick({ '-1': { content: 'uam-7 ping' } }), 503, 'an object member named like an index still matches');
  assert.is(pick('uam-7 ping'), undefined);
  // A name that is not a whole number reaches nothing in a list.
  r.add({ id: 'named', match: { body: { 'messages.last.content': 'uam-7 ping' } }, fault: { status: 504 } });
  assert.is(pick([{ role: 'user', content: 'x' }]), undefined);
});

test('times: the first N matching requests fault, then the rule lets requests through', () => {
  const r = rules();
  r.add({ id: 'twice', match: { operation: 'chat.completions' }, fault: { status: 500, retryAfter: 0.01 }, times: 2 });
  const seen = Array.from({ length: 4 }, () => r.pick(CHAT)?.fault.status);
  assert.equal(seen, [500, 500, undefined, undefined]);
  assert.equal(r.list()[0]!.state, { matched: 2, fired: 2, remaining: 0 });
  r.reset();
  assert.equal(r.list()[0]!.state, { matched: 0, fired: 0, remaining: 2 });
  assert.is(r.pick(CHAT)?.fault.status, 500);
});

test('probability with a seed gives the same fault sequence after a reset, and another seed a different one', () => {
  const r = rules();
  r.add({ id: 'chaos', fault: { status: 503 }, probability: 0.5, seed: 7 });
  const run = () => Array.from({ length: 40 }, () => (r.pick(CHAT) ? 'F' : '.')).join('');
  const first = run();
  assert.match(first, /F/);
  assert.match(first, /\./);
  r.reset();
  assert.is(run(), first);
  const other = rules();
  other.add({ fault: { status: 503 }, probability: 0.5, seed: 8 });
  assert.is.not(Array.from({ length: 40 }, () => (other.pick(CHAT) ? 'F' : '.')).join(''), first);
  const never = rules();
  never.add({ fault: { status: 503 }, probability: 0 });
  assert.is(never.pick(CHAT), undefined);
  assert.equal(never.list()[0]!.state, { matched: 1, fired: 0, remaining: null });
});

test('rules are tried in order; a rule that does not fire lets the next one decide', () => {
  const r = rules();
  r.add({ id: 'a', fault: { status: 500 }, times: 1 });
  r.add({ id: 'b', fault: { status: 502 } });
  assert.is(r.pick(CHAT)?.label, 'status=500 [rule a]');
  assert.is(r.pick(CHAT)?.label, 'status=502 [rule b]');
});

test('ids are generated when absent; list, delete and clear', () => {
  const r = rules();
  assert.is(r.add({ fault: { reset: true } }).id, 'rule-1');
  r.add({ id: 'rule-2', fault: { empty: true } });
  assert.is(r.add({ fault: { malformed: true } }).id, 'rule-3');
  assert.equal(
    r.list().map((v) => v.id),
    ['rule-1', 'rule-2', 'rule-3'],
  );
  assert.ok(r.delete('rule-2'));
  assert.not.ok(r.delete('rule-2'));
  assert.is(r.clear(), 2);
  assert.equal(r.list(), []);
});

test('a bad rule is refused with a message and the field it concerns', () => {
  const r = rules();
  refused(() => r.add({}), /Missing required parameter: 'fault'/, 'fault');
  refused(() => r.add({ fault: { status: 200 } }), /fault.status/, 'fault.status');
  refused(() => r.add({ fault: {} }), /fault/, 'fault');
  refused(() => r.add({ fault: { status: 500 }, seed: 3 }), /probability/, null);
  refused(
    () => r.add({ fault: { reset: true, status: 500 } }),
    /Invalid fault: 'reset' and 'status' cannot be combined/,
    'fault',
  );
  refused(() => r.add({ fault: { delayMs: 5000 } }), /above the server maximum of 1000 ms/, 'fault');
  refused(
    () => r.add({ match: { operation: 'chat' }, fault: { status: 500 } }),
    /Unknown operation 'chat'. Use one of: chat.completions/,
    'match.operation',
  );
  refused(
    () => r.add({ match: { key: 'nobody' }, fault: { status: 500 } }),
    /No configured key has the name 'nobody'/,
    'match.key',
  );
  r.add({ id: 'x', fault: { status: 500 } });
  refused(() => r.add({ id: 'x', fault: { status: 500 } }), /already exists/, 'id', 409);
});

// The biggest rule the schema lets through: every string, list and map at its cap.
function biggestRule(): Record<string, unknown> {
  const s = (n: number, c = 'x') => c.repeat(n);
  const map = (n: number, value: (i: number) => unknown, key = (i: number) => `${s(60)}${i}`.slice(-64)) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [key(i), value(i)]));
  return {
    id: s(64, 'i'),
    description: s(500),
    match: {
      operation: Array.from({ length: 32 }, () => 'chat.completions'),
      model: s(256),
      headers: map(16, () => s(1024)),
      body: map(16, (i) =>
        i % 3 === 0 ? s(1024) : i % 3 === 1 ? Array.from({ length: 8 }, () => s(256)) : map(8, () => s(256)),
      ),
    },
    fault: { status: 503 },
  };
}

test('every part of a rule is capped, so the most rules the server holds stay a bounded size', () => {
  const rule = biggestRule();
  rules().add(rule);
  // 1000 such rules: well under 100 MB, where one uncapped rule could be a whole 20 MB body.
  assert.ok(JSON.stringify(rule).length < 100_000, String(JSON.stringify(rule).length));
});

test('an over-large rule is refused, naming the field', () => {
  const r = rules();
  const over = (n: number) => 'x'.repeat(n);
  const cases: [Record<string, unknown>, string][] = [
    [{ id: over(65) }, 'id'],
    [{ description: over(501) }, 'description'],
    [{ match: { model: over(257) } }, 'match.model'],
    [{ match: { operation: Array.from({ length: 33 }, () => 'chat.completions') } }, 'match.operation'],
    [{ match: { headers: { 'x-a': over(1025) } } }, 'match.headers.x-a'],
    [{ match: { headers: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`h${i}`, 'v'])) } }, 'match.headers'],
    [{ match: { body: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`b${i}`, 1])) } }, 'match.body'],
    [{ match: { body: { model: over(20_000) } } }, 'match.body.model'],
    [{ match: { body: { stop: Array.from({ length: 9 }, () => 'a') } } }, 'match.body.stop'],
    [{ match: { body: { stop: [over(257)] } } }, 'match.body.stop[0]'],
    [
      { match: { body: { stream_options: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, true])) } } },
      'match.body.stream_options',
    ],
    [{ match: { body: { stream_options: { a: over(257) } } } }, 'match.body.stream_options.a'],
    [{ match: { body: { stream_options: { [over(65)]: true } } } }, 'match.body.stream_options'],
    [{ match: { body: { stream_options: { nested: { deeper: true } } } } }, 'match.body.stream_options.nested'],
    [{ match: { body: { messages: [{ role: 'user' }] } } }, 'match.body.messages[0]'],
  ];
  for (const [part, param] of cases) {
    const rule = { fault: { status: 500 }, ...part };
    try {
      r.add(rule);
    } catch (err) {
      assert.instance(err, RuleError);
      assert.is((err as RuleError).param, param, JSON.stringify(rule).slice(0, 200));
      continue;
    }
    assert.unreachable(`accepted: ${JSON.stringify(rule).slice(0, 200)}`);
  }
});

test('an over-large rule in the config is a ConfigError naming the field', () => {
  const input = {
    faultRules: [{ fault: { status: 503 } }, { match: { body: { model: 'x'.repeat(2000) } }, fault: { status: 503 } }],
  };
  try {
    resolveConfig(input as never, schemas());
  } catch (err) {
    assert.instance(err, ConfigError);
    assert.match((err as Error).message, /faultRules\[1\]\.match\.body\.model: .*maximum length 1024/);
    return;
  }
  assert.unreachable('expected a ConfigError');
});

test('the number of rules is bounded', () => {
  const r = rules();
  for (let i = 0; i < MAX_RULES; i++) r.add({ fault: { status: 500 } });
  refused(() => r.add({ fault: { status: 500 } }), new RegExp(`At most ${MAX_RULES} fault rules`), null);
});

test.run();
