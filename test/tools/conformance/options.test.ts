import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Catalogue } from '../../../src/domain/catalogue.js';
import { estimateCost, formatCost } from '../../../src/verdict/cost.js';
import { packageLimits } from '../../../src/domain/limits.js';

const LIMITS = packageLimits();
import { redact, shortBody } from '../../../src/tools/conformance/mask.js';
import {
  conformanceHelp,
  parseConformanceArgs,
  type ConformanceOptions,
} from '../../../src/tools/conformance/options.js';
import { retryAfterMs } from '../../../src/tools/conformance/run.js';
import { SchemaRegistry } from '../../../src/contract/schemas.js';

const catalogue = new Catalogue(new SchemaRegistry());
const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
  parseConformanceArgs(argv, catalogue, env) as ConformanceOptions;

test('defaults: documented profile, pretty on stdout, small concurrency, the catalogue first models', () => {
  const o = parse(['--base-url', 'http://h', '--api-key', 'k']);
  assert.is(o.profile, 'documented');
  assert.is(o.concurrency, 4);
  assert.is(o.faultHeaders, 'auto');
  assert.equal(o.reporters, [{ name: 'pretty' }]);
  assert.equal(o.values, {
    chatModel: 'gpt-4o',
    imageModel: 'dall-e-3',
    videoModel: 'gen3a_turbo',
    voiceId: 'rachel',
    cloudVoice: 'en-US-JennyNeural',
    ttsModel: 'eleven_multilingual_v2',
    imageUrl: 'https://example.com/image.png',
  });
});

test('the key may come from CONFORMANCE_API_KEY; --output binds to the reporter before it; lists split on commas', () => {
  const o = parse(
    [
      '--base-url',
      'http://h',
      '--reporter',
      'junit',
      '--output',
      'j.xml',
      '--reporter',
      'tap',
      '--only',
      'a,b',
      '--only',
      'c',
      '--chat-model',
      'm',
    ],
    {
      CONFORMANCE_API_KEY: 'from-env',
    },
  );
  assert.is(o.apiKey, 'from-env');
  assert.equal(o.reporters, [{ name: 'junit', output: 'j.xml' }, { name: 'tap' }]);
  assert.equal(o.only, ['a', 'b', 'c']);
  assert.is(o.values.chatModel, 'm');
  const files = parse(['--base-url', 'http://h', '--api-key', 'k', '--reporter', 'json', '--output', 'r.json']);
  assert.equal(
    files.reporters,
    [{ name: 'pretty' }, { name: 'json', output: 'r.json' }],
    'pretty keeps the console when every reporter writes a file',
  );
  assert.is(parseConformanceArgs(['--help'], catalogue, {}), 'help');
});

test('--media-allow-private: off unless given; the help names it', () => {
  assert.is(parse(['--base-url', 'http://h', '--api-key', 'k']).mediaAllowPrivate, false);
  assert.is(parse(['--base-url', 'http://h', '--api-key', 'k', '--media-allow-private']).mediaAllowPrivate, true);
  assert.match(
    conformanceHelp(catalogue),
    /--media-allow-private {3}fetch media links on loopback and private addresses/,
  );
});

test('a key an HTTP header cannot carry is a usage error, named by its flag; --continue-on-refused-key is off unless given', () => {
  for (const key of ['ключ', 'a\nb', ' padded', 'padded ', 'tab\tin-it\u0000'])
    assert.throws(
      () => parse(['--base-url', 'http://h', '--api-key', key]),
      /--api-key must be text an HTTP header can carry/,
      JSON.stringify(key),
    );
  assert.throws(
    () => parse(['--base-url', 'http://h', '--api-key', 'k', '--baseline', 'http://b', '--baseline-api-key', '😀']),
    /--baseline-api-key must be text/,
  );
  for (const key of ['test', 'a', `<&>"'`, 'two words', 'caf\u00e9', 'sk-proj-0123456789'])
    assert.is(parse(['--base-url', 'http://h', '--api-key', key]).apiKey, key);
  assert.is(parse(['--base-url', 'http://h', '--api-key', 'k']).continueOnRefusedKey, false);
  assert.is(
    parse(['--base-url', 'http://h', '--api-key', 'k', '--continue-on-refused-key']).continueOnRefusedKey,
    true,
  );
  assert.match(conformanceHelp(catalogue), /--continue-on-refused-key\n +run the cases even when the target refuses/);
  assert.match(conformanceHelp(catalogue), /--reporter NAME +pretty, json, junit, tap or html/);
});

test('cost: units per operation and their text', () => {
  assert.equal(estimateCost('chat.completions', { max_tokens: 1 }, LIMITS), {
    tokens: 1,
    images: 0,
    videoSeconds: 0,
    characters: 0,
  });
  assert.is(estimateCost('chat.completions', {}, LIMITS).tokens, 256);
  // max_completion_tokens, the newer name, bounds the reply in its place, as the mock and the usage check read it.
  assert.is(estimateCost('chat.completions', { max_completion_tokens: 3, max_tokens: 50 }, LIMITS).tokens, 3);
  assert.is(estimateCost('images.generate', { n: 2 }, LIMITS).images, 2);
  assert.is(estimateCost('images.edit', {}, LIMITS).images, 1);
  assert.is(estimateCost('video.generate', {}, LIMITS).videoSeconds, LIMITS.video.defaultDuration);
  const longer = { ...LIMITS, video: { ...LIMITS.video, defaultDuration: 7 } };
  assert.is(estimateCost('video.generate', {}, longer).videoSeconds, 7, 'the default comes from the limits passed in');
  assert.is(estimateCost('cloud.speech', { text: 'héllo' }, LIMITS).characters, 5);
  assert.is(
    formatCost({ tokens: 1, images: 2, videoSeconds: 1, characters: 0 }),
    '1 chat token, 2 images, 1 video second',
  );
  assert.is(formatCost({ tokens: 0, images: 0, videoSeconds: 0, characters: 0 }), 'nothing');
});

test('masking: secrets of 8 characters or more in a text the target sent, never a shorter one; long strings cut', () => {
  assert.is(
    redact('key=sk-abcdefghijklmnop; again sk-abcdefghijklmnop', ['sk-abcdefghijklmnop', '']),
    'key=sk-a...mnop; again sk-a...mnop',
  );
  assert.is(redact('key=abcdefgh; abcdefg', ['abcdefgh', 'abcdefg']), 'key=ab...gh; abcdefg');
  assert.is(redact('a test of the key', ['test', 'key', 'a']), 'a test of the key', 'a word any text holds stays');
  assert.equal(shortBody({ a: ['x'.repeat(100)], b: 1 }), { a: [`${'x'.repeat(40)}... (100 characters)`], b: 1 });
});

test('retry-after: seconds or an HTTP date; 1 s when absent', () => {
  assert.is(retryAfterMs('2'), 2000);
  assert.is(retryAfterMs(undefined), 1000);
  assert.is(retryAfterMs('soon'), 1000);
  assert.is(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6000);
});

test.run();
