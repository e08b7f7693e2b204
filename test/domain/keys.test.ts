import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { findKey, keyStates, maskKey, sameSecret } from '../../src/domain/keys.js';

test('maskKey shows at most four characters at each end, never the whole key', () => {
  assert.is(maskKey('sk-live-0123456789abcdef'), 'sk-l...cdef');
  assert.is(maskKey('sk-mock-default'), 'sk...lt');
  assert.is(maskKey('abcdefgh'), 'ab...gh');
  assert.is(maskKey('short'), '***');
  assert.is(maskKey(''), '***');
  for (const key of ['sk-live-0123456789abcdef', 'sk-mock-default', 'abcdefgh', 'k1'])
    assert.not.ok(maskKey(key).includes(key));
});

test('keyStates keeps the config, the masked key and zeroed usage', () => {
  const [s] = keyStates([{ key: 'sk-test-0123456789', label: 'ci' }]);
  assert.is(s!.config.label, 'ci');
  assert.is(s!.masked, 'sk-t...6789');
  assert.equal(s!.usage, { requests: 0, byOperation: {} });
});

test('findKey finds the presented key among several and nothing for a near miss', () => {
  const states = keyStates([{ key: 'key-one-aaaa' }, { key: 'key-two-bbbb' }]);
  assert.is(findKey(states, 'key-two-bbbb'), states[1]);
  assert.is(findKey(states, 'key-one-aaaa'), states[0]);
  assert.is(findKey(states, 'key-two-bbb'), undefined);
  assert.is(findKey(states, 'KEY-TWO-BBBB'), undefined);
  assert.is(findKey(states, ''), undefined);
  assert.is(findKey([], 'key-one-aaaa'), undefined);
});

test('findKey returns the first of duplicate keys', () => {
  const states = keyStates([
    { key: 'same-key', label: 'a' },
    { key: 'same-key', label: 'b' },
  ]);
  assert.is(findKey(states, 'same-key')!.config.label, 'a');
});

test('sameSecret: equal only for the very same text, whatever the lengths', () => {
  assert.ok(sameSecret('sk-abc', 'sk-abc'));
  for (const [a, b] of [
    ['sk-abc', 'sk-abd'],
    ['sk-ab', 'sk-abc'],
    ['sk-abcsk-abc', 'sk-abc'],
    ['', 'sk-abc'],
    ['sk-abc', 'SK-ABC'],
    ['é', 'e'],
    ['\u0100', '\u0000'],
  ]) {
    assert.not.ok(sameSecret(a!, b!), `${a} / ${b}`);
    assert.not.ok(sameSecret(b!, a!), `${b} / ${a}`);
  }
});

test.run();
