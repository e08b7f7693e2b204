import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { maskKey } from '../../../src/domain/keys.js';
import { derivedSecrets, NEAR_MISSES, nearMissCredential } from '../../../src/tools/conformance/credentials.js';
import { redact } from '../../../src/tools/conformance/mask.js';
import { runSecrets } from '../../../src/tools/conformance/run.js';
import { brokenServer, closeSharedMock, runCli, runJson, sharedMock, type ProxiedRequest } from './harness.js';

const test = suite('conformance: near-miss credentials derived from the key');

test.after(closeSharedMock);

const KEY = 'sk-mock-default';
const PREFIX = 'sk-mock-';

/** The bearer token of a request, or undefined. */
const tokenOf = (r: ProxiedRequest): string | undefined =>
  /^Bearer (.*)$/.exec(String(r.headers.authorization ?? ''))?.[1];
const query = (r: ProxiedRequest): URLSearchParams => new URL(r.path, 'http://x').searchParams;

/**
 * Hurried gateways: each takes the credentials its way; what it takes reaches the mock as the valid key.
 * Each is named by the near misses it must be failed for (more may fail: a prefix match takes several).
 */
const GATEWAYS: [string, (r: ProxiedRequest) => boolean, string[]][] = [
  [
    'takes the last word of the header',
    (r) =>
      String(r.headers.authorization ?? '')
        .split(' ')
        .pop() === KEY,
    ['scheme-token', 'scheme-twice', 'scheme-colon', 'list', 'key-twice'],
  ],
  [
    'strips an optional Bearer',
    (r) => String(r.headers.authorization ?? '').replace(/^Bearer /, '') === KEY,
    ['scheme-none'],
  ],
  [
    'cuts the first six characters and trims',
    (r) =>
      String(r.headers.authorization ?? '')
        .slice(6)
        .trim() === KEY,
    ['scheme-glued'],
  ],
  [
    'reads Basic credentials',
    (r) =>
      /^Basic /.test(String(r.headers.authorization)) &&
      Buffer.from(String(r.headers.authorization).slice(6), 'base64').toString().split(':')[0] === KEY,
    ['basic-user'],
  ],
  [
    'takes a token that starts with the key',
    (r) => tokenOf(r)?.startsWith(KEY) === true,
    ['key-appended', 'key-repeated', 'key-twice', 'key-nbsp'],
  ],
  [
    'takes a token the key starts with',
    (r) => !!tokenOf(r) && KEY.startsWith(tokenOf(r)!),
    ['key-truncated', 'key-prefix'],
  ],
  [
    'compares the first 14 characters',
    (r) => tokenOf(r)?.slice(0, 14) === KEY.slice(0, 14),
    ['key-last-changed', 'key-appended', 'key-truncated'],
  ],
  ['compares the masked forms', (r) => !!tokenOf(r) && maskKey(tokenOf(r)!) === maskKey(KEY), ['key-middle-changed']],
  ['compares without regard to case', (r) => tokenOf(r)?.toLowerCase() === KEY, ['key-case']],
  [
    'takes any key of the right prefix and length',
    (r) => tokenOf(r)?.length === KEY.length && tokenOf(r)!.startsWith(PREFIX),
    ['key-same-format', 'key-last-changed'],
  ],
  ['removes every space', (r) => tokenOf(r)?.replace(/ /g, '') === KEY, ['key-split']],
  ['unquotes the token', (r) => tokenOf(r)?.replace(/^"(.*)"$/, '$1') === KEY, ['key-quoted']],
  ['trims with JavaScript', (r) => tokenOf(r)?.trim() === KEY, ['key-nbsp']],
  ['reads x-api-key', (r) => r.headers['x-api-key'] === KEY, ['x-api-key']],
  ['reads api-key', (r) => r.headers['api-key'] === KEY, ['api-key']],
  [
    'looks for the key in every header',
    (r) => Object.entries(r.headers).some(([k, v]) => k !== 'authorization' && String(v).includes(KEY)),
    ['any-header', 'x-api-key', 'api-key', 'cookie'],
  ],
  ['reads Proxy-Authorization', (r) => r.headers['proxy-authorization'] === `Bearer ${KEY}`, ['proxy-authorization']],
  ['reads ?api_key=', (r) => query(r).get('api_key') === KEY, ['query-api_key']],
  ['reads ?key=', (r) => query(r).get('key') === KEY, ['query-key']],
  ['reads a cookie', (r) => String(r.headers.cookie ?? '').includes(`api_key=${KEY}`), ['cookie']],
];

test('the mock refuses every near miss: x-api-key, the query, a cookie and the rest are not the Authorization header', async () => {
  const { url } = await sharedMock();
  const { code, failed, report } = await runJson(url, ['--only', 'near-miss']);
  assert.is(code, 0, failed.join(', '));
  assert.is(report.summary.passed, NEAR_MISSES.length * 2);
  // Directly too: only x-api-key with the valid key.
  const res = await fetch(`${url}/v1/me`, { headers: { 'x-api-key': KEY } });
  assert.is(res.status, 401);
});

test('every hurried gateway is failed by the case of each near miss it takes, on GET /v1/me and on chat, and by no case outside auth', async () => {
  const caught = new Set<string>();
  for (const [what, accepts, expected] of GATEWAYS) {
    const server = await brokenServer({
      request: (r) => {
        if (!accepts(r)) return;
        r.headers = { ...r.headers, authorization: `Bearer ${KEY}` };
        r.path = r.path.split('?')[0]!;
      },
    });
    try {
      const { code, failed } = await runJson(server.url, ['--only', 'near-miss']);
      assert.is(code, 1, what);
      for (const id of expected)
        for (const op of ['me', 'chat'])
          assert.ok(
            failed.includes(`auth.near-miss.${id}.${op}`),
            `${what}: auth.near-miss.${id}.${op} failed (${failed.join(', ')})`,
          );
      for (const id of failed) {
        // Taking the last word takes `Basic KEY` too: the plain auth cases may fail as well, nothing else.
        assert.ok(id.startsWith('auth.'), `${what}: only auth cases fail, got ${id}`);
        if (id.startsWith('auth.near-miss.')) caught.add(id.split('.')[2]!);
      }
    } finally {
      await server.close();
    }
  }
  assert.equal([...caught].sort(), NEAR_MISSES.map((n) => n.id).sort(), 'every near miss has a gateway that takes it');
});

test('a near miss the key allows none of is not applicable, never the valid key sent expecting 401', async () => {
  assert.is(nearMissCredential('key-case', '0123-4567-89'), undefined);
  assert.is(nearMissCredential('key-truncated', 'k'), undefined);
  for (const n of NEAR_MISSES) {
    const c = nearMissCredential(n.id, KEY);
    assert.ok(c, n.id);
    assert.is.not(c!.authorization, `Bearer ${KEY}`, n.id);
  }
  const { url } = await sharedMock();
  const { code, verdicts, report } = await runJson(
    url,
    ['--only', 'auth.near-miss.key-case', '--continue-on-refused-key'],
    '0123-4567-8901-2345',
  );
  assert.is(code, 0);
  assert.is(verdicts.get('auth.near-miss.key-case.me'), 'not-applicable');
  assert.match(report.cases[0]!.reason!, /no such near miss/);
});

// A key with characters a query string encodes, so its encoded form must be masked too.
const SECRET = 'sk-Near+Miss/Key=0123456789abcdef';

/** Every 6-character piece of the key and of each credential derived from it: none may reach a report. */
const pieces = [SECRET, ...derivedSecrets(SECRET)]
  .flatMap((s) => Array.from({ length: Math.max(0, s.length - 5) }, (_, i) => s.slice(i, i + 6)))
  .filter((p) => p.trim().length === 6);

test('redact masks a credential made from the key whole, as the mask of the key, longest first', () => {
  const secrets = runSecrets({ apiKey: SECRET });
  const split = nearMissCredential('key-split', SECRET)!.authorization!;
  const middle = nearMissCredential('key-middle-changed', SECRET)!.authorization!;
  const text = `got ${split} and ${middle}; then ${SECRET.slice(0, 12)}, ${encodeURIComponent(SECRET)}, ${nearMissCredential('key-case', SECRET)!.authorization!.slice(7)}`;
  const out = redact(text, secrets);
  for (const piece of pieces) assert.not.ok(out.includes(piece), `'${piece}' in ${out}`);
  assert.is(out, 'got Bearer sk-N...cdef and Bearer sk-N...cdef; then sk-N...cdef, sk-N...cdef, sk-N...cdef');
});

test('near misses are masked in every reporter and in the plan, though the target echoes every credential it got', async () => {
  // A target that takes every credential and echoes the request whole: headers, query and all.
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'echo', 'x-echo-url': req.url ?? '' });
    res.end(JSON.stringify({ url: req.url, headers: req.headers }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'near-miss-'));
  try {
    const files = ['json', 'junit', 'tap'].map((r) => [r, join(dir, `report.${r}`)] as const);
    const out = await runCli([
      '--base-url',
      url,
      '--api-key',
      SECRET,
      '--only',
      'near-miss',
      '--profile',
      'full',
      ...files.flatMap(([r, f]) => ['--reporter', r, '--output', f]),
    ]);
    assert.is(out.code, 1);
    const json = readFileSync(files[0][1], 'utf8');
    assert.is(
      (JSON.parse(json) as { summary: { failed: number } }).summary.failed,
      NEAR_MISSES.length * 2,
      'every near miss fails',
    );
    const plan = await runCli(['--plan', '--api-key', SECRET, '--only', 'near-miss']);
    const texts: [string, string][] = [
      ['pretty', out.stdout + out.stderr],
      ...files.map(([r, f]): [string, string] => [r, readFileSync(f, 'utf8')]),
      ['plan', plan.stdout],
    ];
    for (const [name, text] of texts) {
      for (const piece of pieces)
        assert.not.ok(text.includes(piece), `${name} shows '${piece}' of the key or a near miss`);
    }
    assert.match(json, /"x-api-key": "sk-N\.\.\.cdef"/);
    assert.match(json, /\?api_key=sk-N\.\.\.cdef/);
    assert.match(out.stdout, /authorization: Bearer sk-N\.\.\.cdef/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test.run();
