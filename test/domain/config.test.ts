import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CONFIG_SCHEMA,
  ConfigError,
  DEFAULT_EPOCH,
  defaultConfig,
  defaultKeys,
  readConfigFile,
  resolveConfig,
  windowMsOf,
  type Config,
  type SettingSchema,
} from '../../src/domain/config.js';
import { schemaId } from '../../src/contract/schemas.js';
import { assertSchema, schemas } from '../support/index.js';

function configError(input: unknown): string {
  try {
    resolveConfig(input as never, schemas());
  } catch (err) {
    assert.instance(err, ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

function inTempDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'config-'));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('defaults: loopback, port 4010, the fixture keys, fixed clock, 20 MB bodies', () => {
  const c = defaultConfig();
  assert.is(c.host, '127.0.0.1');
  assert.is(c.port, 4010);
  assert.equal(
    c.keys.map((k) => k.key),
    ['sk-mock-default', 'sk-mock-limited'],
  );
  assert.is(c.keys[1]!.rateLimit!.requests, 5);
  assert.is(c.clock, DEFAULT_EPOCH);
  assert.is(c.strict, false);
  assert.is(c.bodyLimit, 20 * 1024 * 1024);
  assert.is(c.bodyMemory, 16 * 1024 * 1024);
  assert.equal(defaultKeys(), c.keys);
});

test('the defaults themselves pass schemas/config.json', () => {
  assertSchema('config.json', defaultConfig());
});

test('resolveConfig fills in defaults and merges nested objects', () => {
  const c = resolveConfig(
    {
      port: 0,
      strict: true,
      timeouts: { stallMaxMs: 5 },
      pacing: { tokensPerSecond: 10 },
      mediaCache: { entries: 2 },
      video: { progress: true },
    },
    schemas(),
  );
  assert.is(c.port, 0);
  assert.is(c.strict, true);
  assert.is(c.timeouts.stallMaxMs, 5);
  assert.is(c.timeouts.requestMs, defaultConfig().timeouts.requestMs);
  assert.equal(c.pacing, { timeToFirstTokenMs: 0, tokensPerSecond: 10 });
  assert.equal(c.mediaCache, { entries: 2, bytes: defaultConfig().mediaCache.bytes });
  assert.is(c.video.progress, true);
  assert.is(c.host, '127.0.0.1');
  assert.equal(resolveConfig({}, schemas()), defaultConfig());
});

test('an invalid configuration names every offending field', () => {
  assert.match(configError({ port: 'eighty' }), /port: expected an integer, but got a string/);
  assert.match(configError({ port: 70000 }), /port: .*<= 65535/);
  assert.match(configError({ keys: [{ key: 'has space' }] }), /keys\[0\]\.key/);
  assert.match(configError({ keys: [] }), /keys: .*minimum length 1/);
  assert.match(configError({ bodyLimit: 10 }), /bodyLimit/);
  assert.match(configError({ bodyMemory: 1024 }), /bodyMemory: .*>= 1048576/);
  assert.match(configError({ logLevel: 'loud' }), /logLevel/);
  assert.match(configError({ timeouts: { stallMaxMs: 0 } }), /timeouts\.stallMaxMs/);
  assert.match(configError({ colour: 'blue' }), /unknown key 'colour'/);
  assert.match(configError({ prot: 1 }), /unknown key 'prot'; did you mean 'port'\?/);
  assert.match(configError({ keys: [{ key: 'a b' }] }), /keys\[0\]\.key: must be printable ASCII without spaces/);
  assert.match(configError({ keys: [{ label: 'x' }] }), /missing key 'keys\[0\]\.key'/);
  const both = configError({ port: -1, host: '' });
  assert.match(both, /port/);
  assert.match(both, /host/);
  assert.match(configError({ clock: 'sometimes' }), /clock/);
  assert.match(configError({ publicUrl: 'not a url' }), /publicUrl/);
});

test('readConfigFile reads a JSON object and names the file on any problem', () => {
  inTempDir((dir) => {
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ $schema: schemaId('config.json'), port: 0 }));
    assert.equal(readConfigFile(good), { $schema: schemaId('config.json'), port: 0 } as never);
    assert.equal(resolveConfig(readConfigFile(good), schemas()).port, 0);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ "port": ');
    assert.throws(
      () => readConfigFile(bad),
      (e: Error) => e instanceof ConfigError && e.message.includes(bad) && /not valid JSON/.test(e.message),
    );
    const list = join(dir, 'list.json');
    writeFileSync(list, '[1]');
    assert.throws(() => readConfigFile(list), /must hold a JSON object/);
    assert.throws(
      () => readConfigFile(join(dir, 'missing.json')),
      (e: Error) => e instanceof ConfigError && /cannot read config file .*missing\.json/.test(e.message),
    );
  });
});

// Every field of a type made required, all the way down (arrays: their items), so a value of it names every field.
type Complete<T> = T extends readonly (infer U)[]
  ? Complete<U>[]
  : T extends object
    ? { -readonly [K in keyof T]-?: Complete<T[K]> }
    : T;

// Every field of Config (and KeyConfig), optional ones too: tsc (tsconfig.check.json) rejects this object when the
// type gains or loses a field, and the test below fails when schemas/config.json lists other fields than it.
const EVERY_FIELD: Complete<Config> = {
  host: '::1',
  port: 0,
  keys: [
    {
      key: 'sk-every-field',
      name: 'every',
      label: 'every',
      scopes: ['text'],
      rateLimit: { requests: 1, windowMs: 1000, tokensPerMinute: 100 },
    },
  ],
  strict: true,
  bodyLimit: 2048,
  bodyMemory: 2 * 1024 * 1024,
  clock: 'system',
  publicUrl: 'https://mock.test',
  replyRules: 'rules.json',
  pacing: { timeToFirstTokenMs: 1, tokensPerSecond: 2 },
  latency: { profile: 'catalogue', seed: 1, profiles: {}, models: {}, queueFullStatus: 503, retryAfterMs: 5 },
  faultHeaders: false,
  faultRules: [],
  adminToken: 'admin-token',
  allowedHosts: ['dev.test'],
  journalSize: 1,
  state: 'redis://127.0.0.1:6379',
  mediaCache: { entries: 1, bytes: 1 },
  logLevel: 'silent',
  metrics: 'vllm',
  timeouts: {
    headersMs: 1,
    requestMs: 1,
    keepAliveMs: 1,
    stallMaxMs: 1,
    streamMaxMs: 1,
    answerMaxMs: 1,
    shutdownGraceMs: 0,
  },
  video: { progress: true },
  proxy: 'https://upstream.test',
  upstreamKey: 'sk-upstream',
  record: 'cassettes',
  replay: 'cassettes',
  replayFallback: 'mock',
  replayTps: 20,
  validationProfile: 'full',
  violationsReport: 'violations.json',
};

/** The dotted path of every field a schema lists (`keys[].rateLimit.windowMs`), its own `$schema` aside. */
function schemaFields(node: SettingSchema, prefix = ''): string[] {
  if (node.items?.properties) return schemaFields(node.items, `${prefix}[]`);
  return Object.entries(node.properties ?? {})
    .filter(([name]) => !name.startsWith('$'))
    .flatMap(([name, child]) => [
      `${prefix}${prefix ? '.' : ''}${name}`,
      ...schemaFields(child, `${prefix}${prefix ? '.' : ''}${name}`),
    ]);
}

/** The dotted path of every field of a value, in the same form. */
function valueFields(value: unknown, prefix = ''): string[] {
  if (Array.isArray(value))
    return value.length && typeof value[0] === 'object' ? valueFields(value[0], `${prefix}[]`) : [];
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([name, v]) => [
    `${prefix}${prefix ? '.' : ''}${name}`,
    ...valueFields(v, `${prefix}${prefix ? '.' : ''}${name}`),
  ]);
}

test('the Config type and schemas/config.json list the same fields, nested ones too', () => {
  assert.equal(valueFields(EVERY_FIELD).sort(), schemaFields(CONFIG_SCHEMA).sort());
  assertSchema('config.json', EVERY_FIELD);
});

test('schemas/config.json describes every field, and its defaults are what defaultConfig gives', () => {
  const undescribed = (node: SettingSchema, path: string): string[] => [
    ...(path && !node.description ? [path] : []),
    ...Object.entries(node.properties ?? node.items?.properties ?? {}).flatMap(([name, child]) =>
      undescribed(child, `${path}${path ? '.' : ''}${name}`),
    ),
  ];
  assert.equal(
    undescribed(
      { ...CONFIG_SCHEMA, properties: { ...CONFIG_SCHEMA.properties, $schema: { description: 'the schema' } } },
      '',
    ),
    [],
  );
  const c = defaultConfig();
  assert.is(c.timeouts.stallMaxMs, CONFIG_SCHEMA.properties!.timeouts!.properties!.stallMaxMs!.default);
  assert.equal(c.faultRules, []);
  assert.is.not(defaultConfig().faultRules, c.faultRules, 'each call gets its own objects');
  assert.not.ok('publicUrl' in c || 'adminToken' in c || 'replyRules' in c, 'fields without a default stay unset');
});

test('a rate limit without a window uses the schema default; readers ask windowMsOf', () => {
  const rateLimit = CONFIG_SCHEMA.properties!.keys!.items!.properties!.rateLimit!;
  assert.is(windowMsOf({ requests: 1 }), rateLimit.properties!.windowMs!.default);
  assert.is(windowMsOf({ requests: 1, windowMs: 5 }), 5);
});

test('allowedHosts may not cover a public suffix nor be one: *.com, *.co.uk, *.github.io, *.lan, com', () => {
  for (const [name, why] of [
    ['*.com', /covers a whole top-level domain/],
    ['*.COM', /covers a whole top-level domain/],
    ['*.lan', /covers a whole top-level domain/],
    ['*.co.uk', /covers a public suffix, where anyone can own a name/],
    ['*.github.io', /covers a public suffix/],
    ['com', /is a whole top-level domain/],
    ['co.uk', /is a public suffix/],
  ] as const) {
    const message = configError({ allowedHosts: ['ok.example.com', name] });
    assert.match(message, new RegExp(`allowedHosts\\[1\\]: '${name.replace(/[.*]/g, '\\$&')}' `), message);
    assert.match(message, why, message);
  }
  const allowed = [
    '*.example.com',
    'mock',
    'dev.test',
    '*.corp.example',
    '*.localhost',
    '127.0.0.1',
    '[::1]',
    'a.co.uk',
  ];
  assert.equal(resolveConfig({ allowedHosts: allowed }, schemas()).allowedHosts, allowed);
});

test.run();
