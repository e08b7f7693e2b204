import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { BodyBudget } from '../../src/domain/bodyBudget.js';
import { loadLimits } from '../../src/domain/limits.js';
import { KEY, tick, useMock, waitFor } from '../support/index.js';
import { responses } from '../hardening/raw.js';

const MiB = 1024 * 1024;
// The size from which bodies take part comes from fixtures/limits.json, like the other request limits.
const LARGE_BODY_BYTES = loadLimits().requests.largeBodyBytes;

/** Reserves each size in turn; `granted` lists the reservations in the order they were granted, as they are. */
async function reserveAll(
  budget: BodyBudget,
  sizes: number[],
): Promise<{ granted: number[]; releases: (() => void)[] }> {
  const granted: number[] = [];
  const releases: (() => void)[] = new Array(sizes.length);
  sizes.forEach((bytes, i) => {
    const grant = (release: () => void) => {
      granted.push(i);
      releases[i] = release;
    };
    const r = budget.reserve(bytes);
    if (r instanceof Promise) void r.then(grant);
    else grant(r);
  });
  await Promise.resolve();
  return { granted, releases };
}

test('bodies that fit are admitted at once; the next waits until enough room is given back', async () => {
  const budget = new BodyBudget(10 * MiB, LARGE_BODY_BYTES);
  const { granted, releases } = await reserveAll(budget, [4 * MiB, 4 * MiB, 4 * MiB]);
  assert.equal(granted, [0, 1]);
  assert.is(budget.heldBytes, 8 * MiB);
  assert.is(budget.waiting, 1);
  releases[0]!();
  await tick();
  assert.equal(granted, [0, 1, 2]);
  assert.is(budget.heldBytes, 8 * MiB);
  assert.is(budget.waiting, 0);
});

test('first come, first served: a small body does not overtake a large one that is waiting', async () => {
  const budget = new BodyBudget(10 * MiB, LARGE_BODY_BYTES);
  const { granted, releases } = await reserveAll(budget, [6 * MiB, 8 * MiB, 2 * MiB]);
  assert.equal(granted, [0], 'the 2 MiB body would fit, but the 8 MiB one came first');
  releases[0]!();
  await tick();
  assert.equal(granted, [0, 1, 2]);
});

test('a body larger than the whole budget is read when nothing else is held', async () => {
  const budget = new BodyBudget(2 * MiB, LARGE_BODY_BYTES);
  const { granted, releases } = await reserveAll(budget, [LARGE_BODY_BYTES, 5 * MiB, LARGE_BODY_BYTES]);
  assert.equal(granted, [0]);
  releases[0]!();
  await tick();
  assert.equal(granted, [0, 1], 'alone, the oversized body goes');
  assert.is(budget.heldBytes, 5 * MiB);
  releases[1]!();
  await tick();
  assert.equal(granted, [0, 1, 2]);
});

test('small bodies are never counted or held; releasing twice gives the room back once', async () => {
  const budget = new BodyBudget(2 * MiB, LARGE_BODY_BYTES);
  const big = budget.reserve(2 * MiB) as () => void;
  const small = budget.reserve(LARGE_BODY_BYTES - 1);
  assert.not.instance(small, Promise);
  assert.is(budget.heldBytes, 2 * MiB);
  const { granted } = await reserveAll(budget, [MiB]);
  assert.equal(granted, []);
  big();
  big();
  await tick();
  assert.equal(granted, [0]);
  assert.is(budget.heldBytes, MiB, 'the second release changed nothing');
});

// End to end: with room for one large body, a second upload is not read until the first is answered.
const mock = useMock(test, { bodyMemory: 1 * MiB });

/** A chat request of exactly `bytes` whose messages are empty: answered 400 as soon as it is parsed. */
function largeRequest(bytes: number): { head: string; body: Buffer } {
  const shell = '{"model":"gpt-4o-mini","messages":[],"pad":""}';
  const body = Buffer.from(shell.replace('"pad":""', `"pad":"${'a'.repeat(bytes - shell.length)}"`));
  const head = `POST /v1/text-provider/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
  return { head, body };
}

/** Opens a connection, writes `first`, and resolves with everything received once the server closes it. */
function open(
  port: number,
  first: Buffer,
): { answered: Promise<string>; send(rest: Buffer): void; write(rest: Buffer): void; got(): string } {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
  socket.write(first);
  return {
    answered: new Promise((resolve) => socket.on('close', () => resolve(text))),
    send: (rest) => socket.end(rest),
    write: (rest) => socket.write(rest),
    got: () => text,
  };
}

/** Both uploads are answered (the 400 for their empty messages), and the budget is back at rest. */
async function bothRefusedAndGivenBack(
  uploads: readonly ReturnType<typeof open>[],
  services: ReturnType<typeof mock>['services'],
): Promise<void> {
  for (const text of await Promise.all(uploads.map((u) => u.answered))) {
    const [res] = responses(text);
    assert.equal([res?.status, res?.json?.error?.param], [400, 'messages'], text.slice(0, 300));
  }
  assert.is(services.bodyBudget.heldBytes, 0, 'every reservation was given back');
  assert.is(services.bodyBudget.waiting, 0);
}

test('a second large upload waits unread until the first one is answered, then both are answered', async () => {
  const { port, services } = mock();
  const a = largeRequest(MiB + 1000);
  const b = largeRequest(MiB + 2000);
  const half = a.body.length >> 1;
  const first = open(port, Buffer.concat([Buffer.from(a.head), a.body.subarray(0, half)]));
  await waitFor('the first body holds the budget', () => services.bodyBudget.heldBytes === a.body.length);
  const second = open(port, Buffer.concat([Buffer.from(b.head), b.body]));
  await waitFor('the second body waits for room', () => services.bodyBudget.waiting === 1);
  assert.is(second.got(), '', 'nothing is answered while it waits');
  // Written, not half-closed: Node's server drops a request whose client half-closes before it is answered, and a
  // large body's answer takes a few turns of the event loop.
  first.write(a.body.subarray(half));
  await bothRefusedAndGivenBack([first, second], services);
});

test('a chunked upload takes part once it passes the large-body size: a second one waits until the first is answered', async () => {
  const { port, services } = mock();
  // Chunked: no declared length, so each is counted for its operation's limit once it has sent largeBodyBytes.
  const chunked = (bytes: number) => {
    const { head, body } = largeRequest(bytes);
    const chunk = (b: Buffer) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);
    return {
      head: Buffer.from(head.replace(/Content-Length: \d+/, 'Transfer-Encoding: chunked')),
      chunk,
      body,
      last: Buffer.from('0\r\n\r\n'),
    };
  };
  const a = chunked(MiB + 1000);
  const b = chunked(MiB + 2000);
  const half = a.body.length - 500; // past largeBodyBytes, not the whole body
  const first = open(port, Buffer.concat([a.head, a.chunk(a.body.subarray(0, half))]));
  await waitFor('the first body holds the budget', () => services.bodyBudget.heldBytes > 0);
  const second = open(port, Buffer.concat([b.head, b.chunk(b.body), b.last]));
  await waitFor('the second body waits for room', () => services.bodyBudget.waiting === 1);
  assert.is(second.got(), '', 'nothing is answered while it waits');
  first.write(Buffer.concat([a.chunk(a.body.subarray(half)), a.last]));
  await bothRefusedAndGivenBack([first, second], services);
});

test('a chunked upload that waits for room and whose client goes away takes no room when it comes', async () => {
  const { port, services } = mock();
  const { head, body } = largeRequest(MiB + 1000);
  const first = open(port, Buffer.from(head + body.toString().slice(0, 5000)));
  await waitFor('the first body holds the budget', () => services.bodyBudget.heldBytes > 0);
  const chunkedHead = head.replace(/Content-Length: \d+/, 'Transfer-Encoding: chunked');
  const part = body.subarray(0, MiB + 10);
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write(
    Buffer.concat([Buffer.from(`${chunkedHead}${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]),
  );
  await waitFor('the chunked body waits for room', () => services.bodyBudget.waiting === 1);
  socket.resetAndDestroy();
  first.write(body.subarray(5000));
  await first.answered;
  await waitFor('all room given back', () => services.bodyBudget.heldBytes === 0 && services.bodyBudget.waiting === 0);
});

test('a large upload whose client goes away gives its room back', async () => {
  const { port, services } = mock();
  const a = largeRequest(MiB + 1000);
  const first = open(port, Buffer.concat([Buffer.from(a.head), a.body.subarray(0, 1000)]));
  await waitFor('the body holds the budget', () => services.bodyBudget.heldBytes > 0);
  first.send(Buffer.alloc(0)); // half-close: the body will never be complete
  await first.answered;
  await waitFor('the room is given back', () => services.bodyBudget.heldBytes === 0);
});

test.run();
