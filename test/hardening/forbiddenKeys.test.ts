// __proto__, constructor and prototype are refused as keys wherever JSON is read, however escaped: request bodies
// (test/pipeline/parseBody.test.ts), and here the configuration, fault rules and latency changes from code, reply
// rules files and cassettes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../src/contract/errors.js';
import { readConfigFile, resolveConfig } from '../../src/domain/config.js';
import { loadReplyRules } from '../../src/domain/replyRules.js';
import { CassetteStore, cassetteName } from '../../src/relay/cassette.js';
import { schemas, useMock } from '../support/index.js';

const mock = useMock(test);
const RULE = /__proto__, constructor, prototype are refused as keys, however escaped/;

/** A folder for the files of one test, removed after it. */
function inDir(fn: (dir: string) => void | Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'uam-keys-'));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

test(
  'a configuration file with an escaped __proto__ anywhere does not start, naming where',
  inDir((dir) => {
    const file = join(dir, 'config.json');
    writeFileSync(file, '{"latency":{"profiles":{"p":{"\\u005f_proto__":{"x":1}}}}}');
    assert.throws(
      () => resolveConfig(readConfigFile(file), schemas()),
      (e: Error) => e.message.includes('the key "__proto__" at /latency/profiles/p/__proto__') && RULE.test(e.message),
    );
    const fromCode = JSON.parse(
      '{"faults":[{"match":{"headers":{"prot\\u006ftype":"x"}},"fault":{"kind":"status","status":500}}]}',
    );
    assert.throws(() => resolveConfig(fromCode, schemas()), /at \/faults\/0\/match\/headers\/prototype is not allowed/);
  }),
);

test('a fault rule added from code, and a latency change, are refused for such a key, naming it', () => {
  const { services } = mock();
  const rule = JSON.parse('{"match":{"body":{"constr\\u0075ctor":{}}},"fault":{"kind":"status","status":500}}');
  assert.throws(
    () => services.faultRules.add(rule),
    (e: Error & { param?: string | null }) => RULE.test(e.message) && e.param === 'match.body.constructor',
  );
  assert.is(services.faultRules.list().length, 0);
  const change = JSON.parse('{"profiles":{"fast":{"__pr\\u006fto__":{}}}}');
  assert.throws(
    () => services.latency.update(change),
    (e: Error) => e instanceof ApiError && e.param === 'profiles.fast.__proto__' && RULE.test(e.message),
  );
});

test(
  'a reply rules file and a cassette that hold such a key are refused, naming the file',
  inDir(async (dir) => {
    const rules = join(dir, 'rules.json');
    writeFileSync(rules, '{"rules":[{"id":"a","match":{"\\u005f_proto__":1},"reply":"x"}]}');
    assert.throws(
      () => loadReplyRules(schemas(), rules),
      (e: Error) => e.message.includes(rules) && RULE.test(e.message),
    );
    const store = new CassetteStore(dir);
    writeFileSync(join(dir, cassetteName('chat.completions', 'h')), '{"version":1,"c\\u006fnstructor":{}}');
    await store.read('chat.completions', 'h').then(
      () => assert.unreachable('read'),
      (e: Error) => assert.match(e.message, RULE),
    );
  }),
);

test.run();
