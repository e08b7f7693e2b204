import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configSecrets, echoMask, secretScrubber } from '../../src/domain/secrets.js';

test('secretScrubber masks a key in plain and JSON-escaped form, and any bearer credential', () => {
  const scrub = secretScrubber(['k"ey\\with-quote', 'abcd']);
  assert.is(scrub(JSON.stringify({ a: 'k"ey\\with-quote' })), JSON.stringify({ a: 'k"...te' }));
  assert.is(scrub('plain abcd and abcd'), 'plain *** and ***');
  assert.is(scrub('Authorization: Bearer some-unknown-token'), 'Authorization: Bearer [redacted]');
  assert.is(secretScrubber(['ab'])('ab stays: too short to be a key'), 'ab stays: too short to be a key');
});

test('for plain text (json: false) the key is masked as written and the mask is not JSON-escaped', () => {
  const scrub = secretScrubber(['k"ey\\with-quote'], { json: false });
  assert.is(scrub('got k"ey\\with-quote here'), 'got k"...te here');
  // The JSON-escaped form is not a key in plain text: it is left as it is.
  assert.is(scrub('k\\"ey\\\\with-quote'), 'k\\"ey\\\\with-quote');
});

test('a key that contains another key is masked whole', () => {
  const scrub = secretScrubber(['sk-short-key1', 'sk-short-key1-and-more'], { json: false });
  assert.is(scrub('x sk-short-key1-and-more y sk-short-key1'), 'x sk-s...more y sk...y1');
});

test('echoMask: masks secrets in JSON and plain text, leaves "Bearer YOUR_KEY" alone, and tells whether a text holds one', () => {
  const mask = echoMask(['sk-live-0123456789abcdef', 'k"ey-0123', 'ab']);
  assert.is(
    mask.json(JSON.stringify({ message: "model 'k\"ey-0123' and sk-live-0123456789abcdef" })),
    JSON.stringify({ message: "model 'k\"...23' and sk-l...cdef" }),
  );
  assert.is(mask.text('Send Authorization: Bearer YOUR_KEY.'), 'Send Authorization: Bearer YOUR_KEY.');
  assert.is(mask.text('/v1/sk-live-0123456789abcdef'), '/v1/sk-l...cdef');
  assert.ok(mask.holds('trace-k"ey-0123'));
  assert.not.ok(mask.holds('trace-ab-1'), 'a secret shorter than 4 characters is not looked for');
});

test('configSecrets: every configured key and the admin token', () => {
  assert.equal(configSecrets({ keys: [{ key: 'a1' }, { key: 'b2' }] }), ['a1', 'b2']);
  assert.equal(configSecrets({ keys: [{ key: 'a1' }], adminToken: 'tok' }), ['a1', 'tok']);
});

test.run();
