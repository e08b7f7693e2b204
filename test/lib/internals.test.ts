// The Node and V8 internals the mock leans on (src/lib/internals.ts), checked on the Node that runs this
// test: each is there and behaves as the fast path assumes. A Node release that renames or changes one
// fails here, by name, instead of slowing the mock down or changing what it records unnoticed.
import { execFileSync } from 'node:child_process';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { headersFromBlock } from '../../src/domain/journal/journal.js';
import { closeAfter, flattenString, writtenHead } from '../../src/lib/internals.js';

interface Seen {
  readonly before: string | undefined;
  readonly head: string | undefined;
  readonly keepAlive: unknown;
  readonly headers: IncomingHttpHeaders;
}

/** Answers one request with `answer`, and reports what the response and the client saw. */
async function exchange(answer: (res: ServerResponse) => void): Promise<Seen> {
  let before: string | undefined;
  let keepAlive: unknown;
  let finished: Promise<string | undefined> | undefined;
  const server = createServer((_req, res) => {
    before = writtenHead(res);
    keepAlive = (res as { shouldKeepAlive?: unknown }).shouldKeepAlive;
    finished = new Promise((resolve) => res.once('finish', () => resolve(writtenHead(res))));
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const headers = await new Promise<IncomingHttpHeaders>((resolve, reject) => {
      const req = httpRequest(
        { port, host: '127.0.0.1', path: '/', agent: false, headers: { connection: 'keep-alive' } },
        (res) => {
          res.resume();
          res.once('end', () => resolve(res.headers));
        },
      );
      req.once('error', reject);
      req.end();
    });
    return { before, head: await finished, keepAlive, headers };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

test('writtenHead: Node keeps the header block it wrote in res._header, as the journal reads it', async () => {
  // Both ways the mock writes a head: setHeader then end (Koa, streams), and one writeHead with a flat list (JSON
  // answers).
  const answers: ((res: ServerResponse) => void)[] = [
    (res) => {
      res.setHeader('x-request-id', 'req_1');
      res.setHeader('Content-Type', 'application/json');
      res.end('{}');
    },
    (res) => {
      res.writeHead(201, ['x-request-id', 'req_2', 'Content-Type', 'application/json', 'Content-Length', '2']);
      res.end('{}');
    },
  ];
  for (const answer of answers) {
    const seen = await exchange(answer);
    assert.is(seen.before, undefined, 'no block before the head is written: reportRequest then reads getHeaders()');
    assert.type(
      seen.head,
      'string',
      'res._header is a string once the head is written (else every record falls back to getHeaders)',
    );
    assert.match(seen.head!, /^HTTP\/1\.1 20[01] [A-Za-z ]+\r\n/);
    assert.ok(seen.head!.endsWith('\r\n\r\n'), 'the whole block, blank line included');
    // The journal's reading of the block is the headers the client got.
    const lower = (h: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), String(v)]));
    assert.equal(lower(headersFromBlock(seen.head!)), lower(seen.headers));
  }
});

test('writtenHead: where Node keeps no block, the caller is told to read the headers instead', () => {
  for (const res of [{}, { _header: null }, { _header: true }, { _header: ['HTTP/1.1 200 OK'] }]) {
    assert.is(writtenHead(res as unknown as ServerResponse), undefined, JSON.stringify(res));
  }
});

test("closeAfter: res.shouldKeepAlive is Node's own flag; false ends the answer with Connection: close, after the mock's headers", async () => {
  const seen = await exchange((res) => {
    res.setHeader('x-request-id', 'req_3');
    closeAfter(res);
    res.end('{}');
  });
  assert.is(seen.keepAlive, true, 'a boolean, true for a keep-alive request');
  assert.is(seen.headers.connection, 'close');
  assert.match(
    seen.head!,
    /^HTTP\/1\.1 200 OK\r\nx-request-id: req_3\r\n(?:.*\r\n)*Connection: close\r\n/i,
    'Node writes it among its own headers, after those set',
  );
});

test('closeAfter: where Node has no such flag, the header is set (before the head only)', () => {
  const set: [string, string][] = [];
  const fake = (headersSent: boolean) =>
    ({
      headersSent,
      setHeader: (name: string, value: string) => void set.push([name, value]),
    }) as unknown as ServerResponse;
  closeAfter(fake(false));
  closeAfter(fake(true));
  assert.equal(set, [['Connection', 'close']]);
});

// A child process running the function's own code (as compiled for this test): its heap holds little
// else, and V8's test-only functions may be turned on in it. Each text is two pieces made apart (flat
// strings of their own) joined by \`+\`; a heap snapshot (taken after a full collection) then lists a
// piece only while something still holds it.
const CHILD = `
const { getHeapSnapshot } = await import('node:v8');
const flattenString = (${flattenString.toString()});
const piece = (tag) => Buffer.from(tag + '.'.repeat(200)).toString('latin1');
const optimize = new Function('f', '%PrepareFunctionForOptimization(f); f("a" + Math.random() + "b"); f("c" + Math.random() + "d"); %OptimizeFunctionOnNextCall(f);');
globalThis.kept = [];
const keep = (tag, flatten) => void globalThis.kept.push(flatten(piece(tag + 'a') + piece(tag + 'b')));
keep('as-joined', (s) => s);
keep('flattened', flattenString);
optimize(flattenString);
keep('optimized', flattenString);
let json = '';
for await (const chunk of getHeapSnapshot()) json += chunk;
const strings = new Set(JSON.parse(json).strings);
console.log(JSON.stringify(Object.fromEntries(['as-joined', 'flattened', 'optimized'].map((tag) => [tag, strings.has(piece(tag + 'a'))]))));
`;

test('flattenString: V8 flattens a joined text in place, so holding it no longer holds its pieces (interpreted and optimized)', () => {
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', CHILD], {
    encoding: 'utf8',
  });
  const held = JSON.parse(out.trim().split('\n').pop()!) as Record<string, boolean>;
  assert.is(held['as-joined'], true, 'the check sees a piece a joined text holds');
  assert.is(
    held.flattened,
    false,
    'Number(text) no longer flattens the text: every record now holds the pieces of its texts',
  );
  assert.is(held.optimized, false, 'optimized code drops the flattening Number(text)');
});

test('flattenString: the text itself is unchanged, whatever V8 does', () => {
  const joined = `${'a'.repeat(40)}${Math.random()}`;
  assert.is(flattenString(joined), joined);
  const object = { a: 1 };
  assert.is(flattenString(object), object);
  assert.is(flattenString(undefined), undefined);
});

test.run();
