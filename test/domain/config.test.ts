import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, DEFAULT_EPOCH, defaultConfig, defaultKeys, readConfigFile, resolveConfig } from '../../src/domain/config.js';
import { schemaId } from '../../src/contract/schemas.js';
import { assertSchema, schemas } from '../helpers.js';

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
  assert.equal(c.keys.map((k) => k.key), ['sk-mock-default', 'sk-mock-limited']);
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
  const c = resolveConfig({ port: 0, strict: true, timeouts: { stallMaxMs: 5 }, pacing: { tokensPerSecond: 10 }, mediaCache: { entries: 2 }, video: { progress: true } }, schemas());
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
  assert.match(configError({ port: 'eighty' }), /port: Invalid type for 'port': expected an integer, but got a string/);
  assert.match(configError({ port: 70000 }), /port: .*<= 65535/);
  assert.match(configError({ keys: [{ key: 'has space' }] }), /keys\[0\]\.key/);
  assert.match(configError({ keys: [] }), /keys: .*minimum length 1/);
  assert.match(configError({ bodyLimit: 10 }), /bodyLimit/);
  assert.match(configError({ bodyMemory: 1024 }), /bodyMemory: .*>= 1048576/);
  assert.match(configError({ logLevel: 'loud' }), /logLevel/);
  assert.match(configError({ timeouts: { stallMaxMs: 0 } }), /timeouts\.stallMaxMs/);
  assert.match(configError({ colour: 'blue' }), /colour: Unrecognized/);
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
    assert.throws(() => readConfigFile(bad), (e: Error) => e instanceof ConfigError && e.message.includes(bad) && /not valid JSON/.test(e.message));
    const list = join(dir, 'list.json');
    writeFileSync(list, '[1]');
    assert.throws(() => readConfigFile(list), /must hold a JSON object/);
    assert.throws(() => readConfigFile(join(dir, 'missing.json')), (e: Error) => e instanceof ConfigError && /cannot read config file .*missing\.json/.test(e.message));
  });
});

test.run();
