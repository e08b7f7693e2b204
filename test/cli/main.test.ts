import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveConfig, serveHelp } from '../../src/cli/main.js';
import { SchemaRegistry } from '../../src/contract/schemas.js';
import { Catalogue } from '../../src/domain/catalogue.js';
import { packageVersion } from '../../src/lib/paths.js';
import { UsageError } from '../../src/verdict/commandLine.js';
import { ConfigError, configSettings } from '../../src/domain/config.js';
import { start } from '../../src/server/server.js';
import { cli, get, post, VALID } from '../support/index.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = cli();
// A CLI that neither exits nor prints its banner within this time fails the test instead of hanging the suite.
const PATIENCE_MS = 60_000;
const VERSION = packageVersion();

/** Runs the CLI to completion; resolves with its exit code and output. */
function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI.args, ...args], {
      cwd: ROOT,
      env: CLI.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`cli ${args.join(' ')} did not exit within ${PATIENCE_MS} ms`));
    }, PATIENCE_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts `serve` and waits for the line that gives its URL; stops it (by its pid) after fn. */
async function serving(args: string[], fn: (url: string, banner: string) => Promise<void>): Promise<void> {
  const child: ChildProcess = spawn(
    process.execPath,
    [...CLI.args, 'serve', '--port', '0', '--log-level', 'silent', ...args],
    { cwd: ROOT, env: CLI.env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  try {
    let out = '';
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c));
    let timer: NodeJS.Timeout | undefined;
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (c: Buffer) => {
        out += c;
        const m = /listening on (http:\/\/\S+)\n[\s\S]*API keys:\n(?:.*\n)+/.exec(out);
        if (m) resolve(m[1]!);
      });
      void exited.then((code) => reject(new Error(`serve exited with ${code}: ${err}`)));
      timer = setTimeout(
        () => reject(new Error(`serve printed no banner within ${PATIENCE_MS} ms: ${out}${err}`)),
        PATIENCE_MS,
      );
    }).finally(() => clearTimeout(timer));
    await fn(url, out);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'cli-'));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

test('serve prints its URL, the default keys, the SDK base URL, the inspector and /metrics, which all work', async () => {
  await serving([], async (url, banner) => {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(banner, new RegExp(`^unified-ai-mock ${VERSION.replace(/\./g, '\\.')} listening on `));
    assert.match(banner, /^ {2}sk-mock-default$/m);
    assert.match(banner, /^ {2}sk-mock-limited \(rate limit: 5 requests per 60 s\)$/m);
    assert.is((await get(url, '/v1/me', 'sk-mock-default')).status, 200);
    const at = (name: string) => new RegExp(`^${name}: +(\\S+)$`, 'm').exec(banner)?.[1];
    assert.is(at('OpenAI SDK baseURL'), `${url}/text-provider`);
    assert.is(at('Inspector'), `${url}/__admin/`);
    assert.is(at('Metrics'), `${url}/metrics`);
    const sdk = new URL(at('OpenAI SDK baseURL')!);
    const chat = await post(
      sdk.origin,
      `${sdk.pathname}/chat/completions`,
      VALID['chat.completions'],
      'sk-mock-default',
    );
    assert.is(chat.status, 200);
    assert.match((await fetch(at('Inspector')!)).headers.get('content-type') ?? '', /text\/html/);
    assert.is((await fetch(at('Metrics')!)).status, 200);
  });
  await serving(['--metrics', 'off'], async (_url, banner) => assert.not.match(banner, /^Metrics:/m));
});

test("README's start banner is the one serve prints", async () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const shown = /It listens on http:\/\/127\.0\.0\.1:4010 and prints[^\n]*\n\n```\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(shown, 'README.md shows no banner');
  await serving([], async (url, banner) => {
    assert.is(banner.replaceAll(url, 'http://127.0.0.1:4010'), shown);
  });
});

test('--api-key replaces the default keys; the banner masks keys given by the user', async () => {
  const long = 'sk-user-0123456789abcdef';
  await serving(['--api-key', 'k1', '--api-key', long], async (url, banner) => {
    assert.is((await get(url, '/v1/me', 'k1')).status, 200);
    assert.is((await post(url, '/voice-provider/tts', VALID['voice.tts'], long)).status, 200);
    assert.is((await get(url, '/v1/me', 'sk-mock-default')).status, 401);
    assert.not.ok(banner.includes(long));
    assert.not.match(banner, /^ {2}k1$/m);
    assert.match(banner, /sk-u\.\.\.cdef/);
  });
});

test('--strict makes unknown fields a 400; without it they are accepted', async () => {
  await serving(['--strict'], async (url) => {
    const res = await post(url, '/voice-provider/tts', { ...VALID['voice.tts'], colour: 'red' });
    assert.is(res.status, 400);
    assert.is(res.json.error.param, 'colour');
  });
});

test('--config: a file sets the configuration and the flags override it', async () => {
  await inTempDir(async (dir) => {
    const file = join(dir, 'mock.json');
    writeFileSync(file, JSON.stringify({ keys: [{ key: 'from-file-key' }], clock: 5, strict: true }));
    await serving(['--config', file, '--clock', '7'], async (url) => {
      assert.is((await get(url, '/v1/me', 'from-file-key')).status, 200);
      const res = await post(url, '/text-provider/images/generations', VALID['images.generate'], 'from-file-key');
      assert.is(res.json.created, 7);
      assert.is((await post(url, '/voice-provider/tts', { ...VALID['voice.tts'], x: 1 }, 'from-file-key')).status, 400);
    });
  });
});

test('--help and serve --help print usage and exit 0', async () => {
  const top = await run(['--help']);
  assert.is(top.code, 0);
  assert.match(top.stdout, /Usage: unified-ai-mock \[command\] \[options\]/);
  assert.match(top.stdout, /serve/);
  const serve = await run(['serve', '--help']);
  assert.is(serve.code, 0);
  assert.match(serve.stdout, /Usage: unified-ai-mock serve/);
  assert.match(serve.stdout, /--api-key KEY/);
  assert.is((await run(['serve', '-h'])).stdout, serve.stdout);
  assert.is((await run(['-h'])).stdout, top.stdout);
});

test("every command's help: lines of at most 100 characters, defaults written '(default: X)', the doc for the rest", async () => {
  for (const args of [
    ['--help'],
    ['serve', '--help'],
    ['conformance', '--help'],
    ['conformance', '--profile', 'gateway', '--help'],
    ['client-check', '--help'],
    ['openapi', '--help'],
  ]) {
    const { code, stdout } = await run(args);
    assert.is(code, 0, args.join(' '));
    for (const line of stdout.split('\n')) assert.ok(line.length <= 100, `${args.join(' ')}: ${line}`);
    const other = stdout.match(/.{0,30}\bdefault\b(?!: )(?! command).{0,30}/g) ?? [];
    assert.equal(other, [], `${args.join(' ')}: a default not written '(default: X)'`);
    assert.match(
      stdout,
      /README\.md|docs\/[\w-]+\.md|A running mock serves the same document/,
      `${args.join(' ')}: no doc named`,
    );
    assert.match(stdout, /-h, --help/, args.join(' '));
    assert.match(stdout, /-v, --version/, args.join(' '));
  }
});

test('--version and -v print the version, for every command and none', async () => {
  for (const args of [
    ['--version'],
    ['-v'],
    ['serve', '--version'],
    ['serve', '-v'],
    ['conformance', '--version'],
    ['conformance', '-v'],
    ['client-check', '--version'],
    ['openapi', '-v'],
  ]) {
    const r = await run(args);
    assert.equal([r.code, r.stdout, r.stderr], [0, `${VERSION}\n`, ''], args.join(' '));
  }
});

test('-p is --port', () => {
  assert.equal(serveConfig(['-p', '0']), { port: 0 });
});

test('a mistyped command or flag gets a "did you mean", in the one error style', async () => {
  const command = await run(['serv']);
  assert.is(command.code, 2);
  assert.is(
    command.stderr,
    "unified-ai-mock: unknown command 'serv'; did you mean 'serve'?\nRun 'unified-ai-mock --help' for the commands.\n",
  );
  const flag = await run(['serve', '--prot', '4011']);
  assert.is(flag.code, 2);
  assert.is(
    flag.stderr,
    "unified-ai-mock: unknown option '--prot'; did you mean '--port'?\nRun 'unified-ai-mock serve --help' for the options.\n",
  );
  const runner = await run(['conformance', '--base-ur', 'http://127.0.0.1:9']);
  assert.match(runner.stderr, /^unified-ai-mock: unknown option '--base-ur'; did you mean '--base-url'\?\n/);
  // Nothing close: no guess.
  assert.is((await run(['launch'])).stderr.split('\n')[0], "unified-ai-mock: unknown command 'launch'");
  assert.is((await run(['serve', '--colour'])).stderr.split('\n')[0], "unified-ai-mock: unknown option '--colour'");
});

test('messages name what the user wrote: the flag and its value, or the file and its key', async () => {
  const key = await run(['serve', '--api-key', 'bad key']);
  assert.is(key.code, 2);
  assert.is(
    key.stderr,
    "unified-ai-mock: invalid configuration:\n  --api-key 'bad key': must be printable ASCII without spaces\n",
  );
  await inTempDir(async (dir) => {
    const file = join(dir, 'mock.json');
    writeFileSync(file, JSON.stringify({ prot: 4011, pacing: { tokensPerSecnd: 5 } }));
    const r = await run(['serve', '--config', file]);
    assert.is(r.code, 2);
    assert.match(r.stderr, new RegExp(`unknown key 'prot' in ${file}; did you mean 'port'\\?`));
    assert.match(
      r.stderr,
      new RegExp(`unknown key 'pacing.tokensPerSecnd' in ${file}; did you mean 'pacing.tokensPerSecond'\\?`),
    );
    assert.not.match(r.stderr, /Unrecognized request argument/);
  });
});

test("a problem found after the schema's check names the flag or the file too", async () => {
  const flag = await run(['serve', '--latency', 'fast', '-p', '0']);
  assert.is(flag.code, 2);
  assert.match(
    flag.stderr,
    /^unified-ai-mock: invalid configuration:\n {2}--latency 'fast': 'fast' is not a profile \(off, catalogue, /,
  );
  await inTempDir(async (dir) => {
    const file = join(dir, 'mock.json');
    writeFileSync(file, JSON.stringify({ latency: { profile: 'fast' } }));
    const r = await run(['serve', '--config', file, '-p', '0']);
    assert.is(r.code, 2);
    assert.ok(r.stderr.includes(`  latency.profile in ${file}: 'fast' is not a profile`), r.stderr);
  });
});

test('--profile, the old name of --validation-profile, still works and warns', () => {
  let err = '';
  const io = { stdout: () => undefined, stderr: (t: string) => void (err += t) };
  assert.equal(serveConfig(['--profile', 'full'], io), { validationProfile: 'full' });
  assert.is(err, 'unified-ai-mock: warning: --profile is deprecated and will be removed: write --validation-profile\n');
  err = '';
  assert.equal(serveConfig(['--validation-profile', 'full'], io), { validationProfile: 'full' });
  assert.is(err, '');
});

test('openapi | head: a reader that stops early ends the command quietly', async () => {
  const child = spawn(process.execPath, [...CLI.args, 'openapi'], {
    cwd: ROOT,
    env: CLI.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  // Like head once it has what it wants: the reading end is closed while the document is still to come.
  child.stdout.destroy();
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.is(stderr, '');
  assert.is(code, 0);
});

test('--allowed-host with a wildcard over a top-level domain or a public suffix exits 2 at start-up, saying why', async () => {
  const refused = await run(['serve', '--port', '0', '--allowed-host', 'dev.test', '--allowed-host', '*.com']);
  assert.is(refused.code, 2);
  // Named as the user wrote it: the flag and its value.
  assert.match(refused.stderr, /--allowed-host '\*\.com': '\*\.com' covers a whole top-level domain: .*DNS rebinding/);
});

test('a bad --config exits 2 with a message naming the file or the field', async () => {
  await inTempDir(async (dir) => {
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{ "port": 4010, ');
    const a = await run(['serve', '--config', broken]);
    assert.is(a.code, 2);
    assert.match(a.stderr, /broken\.json is not valid JSON/);
    const wrong = join(dir, 'wrong.json');
    writeFileSync(wrong, JSON.stringify({ port: 'eighty', logLevel: 'loud' }));
    const b = await run(['serve', '--config', wrong]);
    assert.is(b.code, 2);
    assert.match(b.stderr, /invalid configuration/);
    assert.match(b.stderr, /port in .*wrong\.json: /);
    assert.match(b.stderr, /logLevel in .*wrong\.json: /);
    const missing = await run(['serve', '--config', join(dir, 'none.json')]);
    assert.is(missing.code, 2);
    assert.match(missing.stderr, /cannot read config file/);
  });
});

test('usage errors exit 2: unknown flag, unknown command, a non-numeric port, a port in use', async () => {
  const flag = await run(['serve', '--colour']);
  assert.is(flag.code, 2);
  assert.match(flag.stderr, /colour/);
  const command = await run(['launch']);
  assert.is(command.code, 2);
  assert.match(command.stderr, /unknown command 'launch'/);
  const port = await run(['serve', '--port', 'abc']);
  assert.is(port.code, 2);
  assert.match(port.stderr, /--port must be a number/);
  const busy = await start({ port: 0 });
  try {
    const inUse = await run(['serve', '--port', String(busy.port)]);
    assert.is(inUse.code, 2);
    assert.is(
      inUse.stderr,
      `unified-ai-mock: port ${busy.port} on 127.0.0.1 is in use (another mock, or Prism, whose default port is 4010 too): choose another with -p PORT, or -p 0 for a free one\n`,
    );
  } finally {
    await busy.close();
  }
});

test('serveConfig maps every flag to its configuration field', () => {
  assert.equal(serveConfig([]), {});
  assert.is(serveConfig(['--help']), 'help');
  assert.equal(
    serveConfig([
      '--port',
      '0',
      '--host',
      '::1',
      '--api-key',
      'a',
      '--api-key',
      'b',
      '--strict',
      '--no-fault-headers',
      '--admin-token',
      'admin-123',
      '--clock',
      'system',
      '--public-url',
      'https://x.test',
      '--reply-rules',
      'rules.json',
      '--ttft',
      '100',
      '--tps',
      '12.5',
      '--body-limit',
      '4096',
      '--log-level',
      'debug',
    ]),
    {
      port: 0,
      host: '::1',
      keys: [
        { key: 'a', name: 'cli-1', scopes: ['text', 'image', 'video', 'voice', 'speech'] },
        { key: 'b', name: 'cli-2', scopes: ['text', 'image', 'video', 'voice', 'speech'] },
      ],
      strict: true,
      faultHeaders: false,
      adminToken: 'admin-123',
      clock: 'system',
      publicUrl: 'https://x.test',
      replyRules: 'rules.json',
      pacing: { timeToFirstTokenMs: 100, tokensPerSecond: 12.5 },
      bodyLimit: 4096,
      logLevel: 'debug',
    },
  );
  assert.equal(serveConfig(['--clock', '1700000000']), { clock: 1700000000 });
  assert.equal(serveConfig(['--latency', 'catalogue', '--latency-seed', '42', '--queue-full', '503']), {
    latency: { profile: 'catalogue', seed: 42, queueFullStatus: 503 },
  });
  assert.throws(
    () => serveConfig(['--tps', 'fast']),
    (e: Error) => e instanceof ConfigError && /--tps must be a number, got 'fast'/.test(e.message),
  );
  assert.throws(() => serveConfig(['--port=-1']), /--port must be a number/);
  assert.throws(
    () => serveConfig(['--nope']),
    (e: Error) => e instanceof UsageError && e.message === "unknown option '--nope'",
  );
});

test('serve --help is written from schemas/config.json: every flag in one sentence with its values and default', () => {
  const help = serveHelp();
  const flagged = configSettings().filter((s) => s.schema['x-flag']);
  assert.ok(flagged.length >= 13);
  for (const s of flagged) {
    assert.ok(help.includes(`${s.schema['x-flag']!} `), s.schema['x-flag']);
    assert.ok(
      s.schema['x-help'] && help.replace(/\s+/g, ' ').includes(s.schema['x-help']),
      `x-help of ${s.path.join('.')}`,
    );
  }
  assert.match(
    help,
    /--body-limit BYTES +largest request body in bytes \(image edit; the other operations have\s+lower limits of their own\); a larger one is a 413\s+\(default: 20971520\)\n/,
  );
  assert.match(help, /--log-level LEVEL .*: fatal, error, warn, info, debug,\s+trace or silent \(default: info\)\n/);
  // The latency profiles are the catalogue's.
  const profiles = [...new Catalogue(SchemaRegistry.shared()).profiles.keys()];
  assert.ok(profiles.length > 3);
  const latency = /--latency PROFILE([\s\S]*?)\n {2}-/.exec(help)![1]!.replace(/\s+/g, ' ');
  for (const p of ['off', 'catalogue', ...profiles]) assert.ok(latency.includes(` ${p}`), `${p} in ${latency}`);
  // One sentence a flag, defaults written one way, and the doc for the rest.
  assert.not.match(help, /; default |default \d|\[default/);
  assert.match(help, /docs\/configuration\.md/);
  for (const line of help.split('\n')) assert.ok(line.length <= 100, line);
  const flagLines = help.split('\n').filter((l) => /^ {2}-/.test(l));
  const entries = help.split(/\n(?= {2}-)/).filter((e) => /^ {2}-/.test(e));
  assert.is(entries.length, flagLines.length);
  for (const entry of entries) {
    const text = entry
      .split('\n')
      .filter((l) => l.trim() && !/^\S/.test(l))
      .join(' ')
      .replace(/\s+/g, ' ');
    assert.not.match(text.replace(/\(default: [^)]*\)/, ''), /\. [A-Z]/, `one sentence: ${text}`);
  }
  assert.ok(help.split('\n').length <= 72, `${help.split('\n').length} lines`);
});

test.run();
