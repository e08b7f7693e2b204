// Which addresses a media link may point to (src/tools/conformance/addresses.ts), and fetchMedia
// refusing the others on the first link and on every redirect, before any connection is made.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  addressKind,
  addressRefusal,
  isLocalTarget,
  mediaAllowsPrivate,
  type Lookup,
} from '../../../src/tools/conformance/addresses.js';
import { fetchMedia } from '../../../src/tools/conformance/http.js';

test('addressKind: v4, v6 and v4-mapped v6 forms of each range, its edges, and public addresses', () => {
  const kinds: Record<string, string | undefined> = {
    // link-local, the metadata service's range
    '169.254.169.254': 'link-local',
    '169.254.0.0': 'link-local',
    '169.254.255.255': 'link-local',
    'fe80::1': 'link-local',
    'febf:ffff::1': 'link-local',
    '::ffff:169.254.169.254': 'link-local',
    '::ffff:a9fe:a9fe': 'link-local',
    // unspecified
    '0.0.0.0': 'unspecified',
    '0.1.2.3': 'unspecified',
    '::': 'unspecified',
    '::ffff:0.0.0.0': 'unspecified',
    // the metadata services outside link-local, ahead of the private ranges they sit in
    '100.100.100.200': 'cloud metadata',
    'fd00:ec2::254': 'cloud metadata',
    // loopback
    '127.0.0.1': 'loopback',
    '127.255.255.254': 'loopback',
    '::1': 'loopback',
    '::ffff:127.0.0.1': 'loopback',
    '::ffff:7f00:1': 'loopback',
    // private: RFC 1918, CGNAT, unique local
    '10.0.0.1': 'private',
    '10.255.255.255': 'private',
    '172.16.0.0': 'private',
    '172.31.255.255': 'private',
    '192.168.1.1': 'private',
    '100.64.0.0': 'private',
    '100.127.255.255': 'private',
    'fc00::1': 'private',
    'fdff:ffff::1': 'private',
    'fd00:ec2::253': 'private',
    '::ffff:10.0.0.1': 'private',
    '::ffff:192.168.0.1': 'private',
    // public, just outside the ranges
    '8.8.8.8': undefined,
    '1.1.1.1': undefined,
    '169.253.255.255': undefined,
    '169.255.0.0': undefined,
    '126.255.255.255': undefined,
    '128.0.0.0': undefined,
    '172.15.255.255': undefined,
    '172.32.0.0': undefined,
    '192.167.255.255': undefined,
    '192.169.0.0': undefined,
    '100.63.255.255': undefined,
    '100.128.0.0': undefined,
    '11.0.0.0': undefined,
    '2606:4700::1111': undefined,
    'fec0::1': undefined,
    'fe7f::1': undefined,
    'fbff::1': undefined,
    '::2': undefined,
    '::ffff:8.8.8.8': undefined,
    // not an address
    localhost: undefined,
    '': undefined,
  };
  for (const [address, kind] of Object.entries(kinds)) assert.is(addressKind(address), kind, address);
});

test('addressRefusal: link-local, unspecified and metadata always; loopback and private only when not allowed; every address counts', () => {
  for (const allowPrivate of [false, true]) {
    assert.is(
      addressRefusal('169.254.169.254', ['169.254.169.254'], allowPrivate),
      'a link-local address (169.254.169.254), which the runner does not fetch',
    );
    assert.is(
      addressRefusal('[::]', ['::'], allowPrivate),
      'an unspecified address (::), which the runner does not fetch',
    );
    assert.is(
      addressRefusal('[::ffff:a9fe:a9fe]', ['::ffff:a9fe:a9fe'], allowPrivate),
      'a link-local address (::ffff:169.254.169.254), which the runner does not fetch',
    );
    assert.is(
      addressRefusal('meta.example', ['100.100.100.200'], allowPrivate),
      'a cloud metadata address (meta.example resolves to 100.100.100.200), which the runner does not fetch',
    );
    assert.is(addressRefusal('cdn.example', ['93.184.216.34', '2606:2800:220:1::1'], allowPrivate), undefined);
  }
  const fromPublic = ', which the runner does not fetch from a public target (--media-allow-private allows it)';
  assert.is(addressRefusal('127.0.0.1', ['127.0.0.1'], false), `a loopback address (127.0.0.1)${fromPublic}`);
  assert.is(addressRefusal('[::1]', ['::1'], false), `a loopback address (::1)${fromPublic}`);
  assert.is(
    addressRefusal('[::ffff:7f00:1]', ['::ffff:7f00:1'], false),
    `a loopback address (::ffff:127.0.0.1)${fromPublic}`,
  );
  assert.is(addressRefusal('10.1.2.3', ['10.1.2.3'], false), `a private address (10.1.2.3)${fromPublic}`);
  assert.is(addressRefusal('127.0.0.1', ['127.0.0.1'], true), undefined);
  assert.is(addressRefusal('[fd12::1]', ['fd12::1'], true), undefined);
  // A name with a public address and a private one is refused: fetch may connect to either.
  assert.is(
    addressRefusal('mixed.example', ['93.184.216.34', '192.168.0.7'], false),
    `a private address (mixed.example resolves to 192.168.0.7)${fromPublic}`,
  );
  // The always-refused address is named, wherever it is in the list.
  assert.is(
    addressRefusal('mixed.example', ['10.0.0.1', '169.254.169.254'], false),
    'a link-local address (mixed.example resolves to 169.254.169.254), which the runner does not fetch',
  );
  assert.is(
    addressRefusal('mixed.example', ['10.0.0.1', '169.254.169.254'], true),
    'a link-local address (mixed.example resolves to 169.254.169.254), which the runner does not fetch',
  );
});

test('isLocalTarget: a target on loopback or private addresses only, by literal or by name (localhost resolves)', async () => {
  assert.ok(await isLocalTarget('127.0.0.1'));
  assert.ok(await isLocalTarget('[::1]'));
  assert.ok(await isLocalTarget('10.0.0.5'));
  assert.ok(await isLocalTarget('localhost'), 'localhost, through the system resolver');
  const fake: Lookup = async (name) =>
    ({
      'gw.internal': ['10.0.0.5', 'fd00::5'],
      'mixed.example': ['10.0.0.5', '93.184.216.34'],
      'meta.example': ['169.254.169.254'],
    })[name] ?? [];
  assert.ok(await isLocalTarget('gw.internal', fake));
  assert.not.ok(await isLocalTarget('mixed.example', fake), 'one public address makes the target public');
  assert.not.ok(await isLocalTarget('meta.example', fake), 'link-local is not a local target');
  assert.not.ok(await isLocalTarget('93.184.216.34'));
  assert.not.ok(await isLocalTarget('nowhere.example', fake), 'no address');
  assert.not.ok(await isLocalTarget('nowhere.invalid'), 'a name that does not resolve');
});

test('mediaAllowsPrivate: when asked (--media-allow-private), or when the target is on loopback or private addresses itself', async () => {
  const lookup: Lookup = async (name) =>
    ({ 'api.example': ['93.184.216.34'], 'gw.internal': ['10.0.0.5'] })[name] ?? [];
  assert.not.ok(await mediaAllowsPrivate('https://api.example', false, lookup));
  assert.ok(await mediaAllowsPrivate('https://api.example', true, lookup));
  assert.ok(await mediaAllowsPrivate('https://gw.internal:8443/base', false, lookup));
  assert.ok(await mediaAllowsPrivate('http://127.0.0.1:4817', false, lookup));
  assert.ok(await mediaAllowsPrivate('http://[::1]:4817', false, lookup));
});

/** The client sockets opened while `run` runs (every connection attempt, by fetch or anything else). */
async function socketsDuring<T>(run: () => Promise<T>): Promise<{ result: T; sockets: number }> {
  let sockets = 0;
  const count = () => void sockets++;
  subscribe('net.client.socket', count);
  try {
    return { result: await run(), sockets };
  } finally {
    unsubscribe('net.client.socket', count);
  }
}

/** A media server on 127.0.0.1: /png answers 200 with bytes; any other path redirects (302) to the path's rest, e.g.
 * /to/http://169.254.169.254/. */
async function mediaServer(): Promise<{ url: string; paths: string[]; server: Server }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url!);
    if (req.url === '/png') return void res.writeHead(200, { 'content-type': 'image/png' }).end('png');
    res.writeHead(302, { location: req.url!.replace(/^\/to\//, '') }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths, server };
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

test('fetchMedia: a link to the metadata service, in any spelling, is refused without a connection attempt, even with private addresses allowed', async () => {
  const links = [
    'http://169.254.169.254/latest/meta-data/iam/security-credentials/role',
    'http://2852039166/latest/meta-data/', // 169.254.169.254 as one number: URL normalizes it
    'http://[::ffff:169.254.169.254]/latest/meta-data/',
    'http://[fe80::1]/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://100.100.100.200/latest/meta-data/',
    'http://[fd00:ec2::254]/latest/meta-data/',
  ];
  for (const link of links) {
    const { result, sockets } = await socketsDuring(() => fetchMedia(link, { timeoutMs: 5000, allowPrivate: true }));
    assert.ok('error' in result && result.refused, `${link}: ${JSON.stringify(result)}`);
    assert.match(
      (result as { error: string }).error,
      /^the link points to an? (link-local|unspecified|cloud metadata) address \([^)]+\), which the runner does not fetch$/,
      link,
    );
    assert.is(sockets, 0, `${link}: no connection attempt`);
  }
});

test('fetchMedia: a loopback link is fetched when private addresses are allowed, refused without a request when not', async () => {
  const media = await mediaServer();
  try {
    const port = new URL(media.url).port;
    for (const link of [`${media.url}/png`, `http://localhost:${port}/png`]) {
      const allowed = await socketsDuring(() => fetchMedia(link, { timeoutMs: 5000, allowPrivate: true }));
      assert.ok(
        'body' in allowed.result && allowed.result.body.toString() === 'png',
        `${link}: ${JSON.stringify(allowed.result)}`,
      );
      assert.ok(allowed.sockets > 0, 'the count sees the connections fetch makes');
      const { result, sockets } = await socketsDuring(() => fetchMedia(link, { timeoutMs: 5000 }));
      assert.ok('error' in result && result.refused, JSON.stringify(result));
      assert.match(
        (result as { error: string }).error,
        /^the link points to a loopback address \((localhost resolves to )?127\.0\.0\.1\), which the runner does not fetch from a public target \(--media-allow-private allows it\)$/,
      );
      assert.is(sockets, 0);
    }
    assert.equal(media.paths, ['/png', '/png'], 'only the allowed fetches reached the server');
  } finally {
    await close(media.server);
  }
});

test('fetchMedia: every redirect is checked before it is followed: to the metadata service, refused; to another loopback link, followed', async () => {
  const media = await mediaServer();
  try {
    const links = ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:a9fe:a9fe]/', 'http://0.0.0.0:80/'];
    for (const to of links) {
      const got = await fetchMedia(`${media.url}/to/${to}`, { timeoutMs: 5000, allowPrivate: true });
      assert.ok('error' in got && got.refused, JSON.stringify(got));
      assert.match(
        (got as { error: string }).error,
        /^the link redirects \(302\) to an? (link-local|unspecified) address \([^)]+\), which the runner does not fetch$/,
      );
    }
    const port = new URL(media.url).port;
    const followed = await fetchMedia(`${media.url}/to/http://localhost:${port}/png`, {
      timeoutMs: 5000,
      allowPrivate: true,
    });
    assert.ok('body' in followed && followed.body.toString() === 'png', JSON.stringify(followed));
    assert.equal(
      media.paths,
      [...links.map((to) => `/to/${to}`), `/to/http://localhost:${port}/png`, '/png'],
      'the refused hops were never requested',
    );
  } finally {
    await close(media.server);
  }
});

test('fetchMedia: every address of a name is checked, through the lookup given, within the timeout', async () => {
  const names: Record<string, string[]> = {
    'mixed.example': ['93.184.216.34', '169.254.169.254'],
    'private.example': ['93.184.216.34', '10.0.0.7'],
  };
  const lookup: Lookup = async (name) => names[name] ?? [];
  const { result, sockets } = await socketsDuring(() =>
    fetchMedia('https://mixed.example/a.png', { timeoutMs: 5000, allowPrivate: true, lookup }),
  );
  assert.equal(result, {
    error:
      'the link points to a link-local address (mixed.example resolves to 169.254.169.254), which the runner does not fetch',
    refused: true,
  });
  const private_ = await fetchMedia('https://private.example/a.png', { timeoutMs: 5000, lookup });
  assert.equal(private_, {
    error:
      'the link points to a private address (private.example resolves to 10.0.0.7), which the runner does not fetch from a public target (--media-allow-private allows it)',
    refused: true,
  });
  assert.is(sockets, 0);
  // A resolver that never answers is bounded by the timeout like any other step. (Its timer stands for
  // the resolver's pending work, which keeps the process alive; the runner's own timer does not.)
  let pending: NodeJS.Timeout | undefined;
  const never: Lookup = () => new Promise(() => void (pending = setTimeout(() => {}, 60_000)));
  assert.equal(await fetchMedia('https://slow.example/a.png', { timeoutMs: 50, lookup: never }), {
    error: 'no answer within the 50 ms timeout',
  });
  clearTimeout(pending);
  // A name that does not resolve is a failure to fetch, not a refusal.
  const missing = await fetchMedia('http://nowhere.invalid/a.png', { timeoutMs: 5000 });
  assert.ok(
    'error' in missing && !missing.refused && /ENOTFOUND|EAI_AGAIN/.test(missing.error),
    JSON.stringify(missing),
  );
});

test.run();
