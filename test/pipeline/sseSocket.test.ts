/**
 * The stream writer over real sockets: after the head, events go straight to the socket in chunked transfer
 * coding's frames (pipeline/sse.ts send). These tests read the bytes as a strict HTTP/1.1 client would, and fill
 * a real socket's buffers to see the writer wait for the client.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { StreamLog, writeSse, type StreamOutcome } from '../../src/pipeline/sse.js';
import { EventList, type FrameSink, type Reply, type SseEvent, type SseEvents } from '../../src/contract/reply.js';
import { virtualTimers, waitFor, wireOf, type Wire } from '../support/index.js';
import type { StreamTimers } from '../../src/pipeline/pacer.js';

type SseReply = Extract<Reply, { kind: 'sse' }>;

const reply = (events: SseEvent[], tokensPerSecond = 0): SseReply => ({
  kind: 'sse',
  events: new EventList(events),
  ending: 'done',
  pacing: { timeToFirstTokenMs: 0, tokensPerSecond },
});
const body = (events: SseEvent[]) => `${events.map((e) => `data: ${e.data}\n\n`).join('')}data: [DONE]\n\n`;

/** What the server saw of one stream: its response, how many times the response's own write ran, the outcome. */
interface Seen {
  res: ServerResponse;
  /** The connection (a response's own socket is set only while it is the one being answered). */
  socket: Socket;
  resWrites: number;
  log: StreamLog;
  drainListenersBefore: number;
  outcome: Promise<StreamOutcome>;
}

/** A node:http server that answers each request with `make()` through writeSse. */
async function sseServer(
  make: () => SseReply,
  timers?: StreamTimers,
): Promise<{ server: Server; port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const own = res.write;
    const entry = { res, socket: req.socket, resWrites: 0 } as Seen;
    res.write = function (this: ServerResponse, ...args: Parameters<ServerResponse['write']>) {
      entry.resWrites++;
      return own.apply(this, args);
    } as ServerResponse['write'];
    entry.drainListenersBefore = req.socket.listenerCount('drain');
    entry.log = new StreamLog({ maxStreamEvents: 0, maxStreamEventChars: 0 });
    entry.outcome = writeSse(res, make(), 1000, timers, Number.POSITIVE_INFINITY, entry.log);
    seen.push(entry);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

/** Resolves with the stream once its writer waits for 'drain' (it listens for it on the response or the socket). */
const waitingForDrain = (seen: Seen[]): Promise<Seen> =>
  waitFor('the writer to wait for the client', () => {
    const s = seen[0];
    return s && (s.socket.listenerCount('drain') > s.drainListenersBefore || s.res.listenerCount('drain') > 0) && s;
  });

/** Sends `head` on a new connection and returns the socket and every byte it receives until it closes. */
function rawClient(port: number, head: string): { socket: Socket; bytes: Promise<Buffer> } {
  const socket = connect(port, '127.0.0.1');
  socket.write(head);
  const chunks: Buffer[] = [];
  const bytes = new Promise<Buffer>((resolve, reject) => {
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks)));
  });
  return { socket, bytes };
}

/** Decodes a chunked body strictly: each size line in hex, exactly that many bytes, CRLF; then the last chunk. */
function dechunk(raw: Buffer): { chunks: number; body: string } {
  let at = 0;
  let chunks = 0;
  const parts: Buffer[] = [];
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    assert.ok(eol > at, `a chunk size line at byte ${at}`);
    const sizeText = raw.toString('latin1', at, eol);
    assert.match(sizeText, /^[0-9a-f]+$/, 'the chunk size is hex');
    const size = Number.parseInt(sizeText, 16);
    at = eol + 2;
    if (size === 0) {
      assert.is(raw.toString('latin1', at), '\r\n', 'the last chunk ends the body');
      return { chunks, body: Buffer.concat(parts).toString('utf8') };
    }
    parts.push(raw.subarray(at, at + size));
    at += size;
    assert.is(raw.toString('latin1', at, at + 2), '\r\n', `chunk ${chunks} ends with CRLF`);
    at += 2;
    chunks++;
  }
}

/** Compares long texts without printing them whole: where they first differ, and a little of each there. */
function same(actual: string, expected: string, what: string): void {
  if (actual === expected) return;
  let at = 0;
  while (at < actual.length && actual[at] === expected[at]) at++;
  assert.unreachable(
    `${what}: ${actual.length} chars against ${expected.length}, first differing at ${at}: ${JSON.stringify(actual.slice(at, at + 40))} against ${JSON.stringify(expected.slice(at, at + 40))}`,
  );
}

const split = (raw: Buffer) => {
  const end = raw.indexOf('\r\n\r\n');
  return { head: raw.toString('latin1', 0, end), rest: raw.subarray(end + 4) };
};

test('HTTP/1.1: paced events after the first leave as chunks written to the socket, which a strict reader decodes', async () => {
  // Multibyte text: a chunk's size counts bytes, not characters.
  const events = Array.from({ length: 30 }, (_, i) => ({
    data: `{"n":${i},"t":"é ${'x'.repeat(i * 37)}"}`,
    tokens: 1,
  }));
  // Paced on a virtual clock that waits for the client to read each event before the next is due.
  const link: { wire?: Wire } = {};
  const clock = virtualTimers(() => link.wire?.quiet() ?? true);
  const { server, port, seen } = await sseServer(() => reply(events, 200), clock);
  const wire = (link.wire = wireOf(server));
  try {
    const { socket, bytes } = rawClient(port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    wire.track(socket);
    const { head, rest } = split(await bytes);
    assert.match(head, /^HTTP\/1\.1 200 /);
    assert.match(head.toLowerCase(), /\r\ntransfer-encoding: chunked/);
    const decoded = dechunk(rest);
    same(decoded.body, body(events), 'the body');
    // The head with the first event, then one chunk an event, 5 ms apart, and the last one.
    assert.is(decoded.chunks, 31, 'one chunk an event when paced');
    assert.is(await seen[0]!.outcome, 'completed');
    // The head and the first event go through the response; the paced ones after it straight to the socket.
    assert.ok(seen[0]!.resWrites <= 2, `the response's write ran ${seen[0]!.resWrites} times`);
  } finally {
    server.close();
  }
});

test('HTTP/1.1 without pacing: batches go straight to the socket too, and keep-alive serves the next request', async () => {
  const events = Array.from({ length: 50 }, (_, i) => ({ data: `{"n":${i}}`, tokens: 1 }));
  const { server, port, seen } = await sseServer(() => reply(events));
  try {
    const { bytes } = rawClient(
      port,
      'GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    const raw = await bytes;
    const first = split(raw);
    const end = first.rest.indexOf('\r\n0\r\n\r\n') + 7;
    same(dechunk(first.rest.subarray(0, end)).body, body(events), 'the first body');
    const second = split(first.rest.subarray(end));
    assert.match(second.head, /^HTTP\/1\.1 200 /);
    same(dechunk(second.rest).body, body(events), 'the second body');
    assert.equal(await Promise.all(seen.map((s) => s.outcome)), ['completed', 'completed']);
  } finally {
    server.close();
  }
});

test('HTTP/1.0: no chunks; the events are the body, and the connection ends it', async () => {
  const events = Array.from({ length: 12 }, (_, i) => ({ data: `{"n":${i}}`, tokens: 1 }));
  const { server, port, seen } = await sseServer(() => reply(events, 2000));
  try {
    const { bytes } = rawClient(port, 'GET / HTTP/1.0\r\n\r\n');
    const { head, rest } = split(await bytes);
    assert.not.match(head.toLowerCase(), /transfer-encoding/);
    same(rest.toString('utf8'), body(events), 'the body');
    assert.is(await seen[0]!.outcome, 'completed');
  } finally {
    server.close();
  }
});

test('a client that stops reading: the writer waits on the socket instead of buffering the stream, then finishes', async () => {
  // 256 events of 64 KiB: far more than the kernel's buffers of a loopback connection hold.
  const big = 'y'.repeat(64 * 1024);
  const events = Array.from({ length: 256 }, (_, i) => ({ data: `${i}:${big}`, tokens: 1 }));
  const { server, port, seen } = await sseServer(() => reply(events));
  try {
    const socket = connect(port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    socket.pause();
    // The client reads nothing: once the kernel's buffers are full, the writer waits for the socket to drain.
    const s = await waitingForDrain(seen);
    const held = s.socket.writableLength;
    assert.ok(s.log.total < events.length, `the writer stopped (${s.log.total} of ${events.length} written)`);
    assert.ok(held < 1024 * 1024, `the server holds ${held} bytes for the client, not the stream`);
    const received = readToClose(socket);
    assert.is(await s.outcome, 'completed');
    const chunks = await received;
    same(dechunk(split(Buffer.concat(chunks)).rest).body, body(events), 'the body');
    assert.is(s.log.total, events.length + 1, 'every event and [DONE]');
  } finally {
    server.close();
  }
});

/** Resumes a paused client socket and gathers what it reads until the server closes the connection. */
function readToClose(socket: Socket): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const closed = new Promise<Buffer[]>((resolve) => socket.on('close', () => resolve(chunks)));
  socket.resume();
  return closed;
}

/** Events made as the chat stream makes them: one head piece shared by every event, then the event's own bytes. */
class HeadedEvents implements SseEvents {
  private readonly head: Buffer;
  constructor(
    readonly length: number,
    private readonly pad: string,
    private readonly id = 'chatcmpl-held',
  ) {
    this.head = Buffer.from(`data: {"id":"${id}",`);
  }
  data(i: number): string {
    return `{"id":"${this.id}",${this.rest(i)}`;
  }
  chars(i: number): number {
    return this.data(i).length;
  }
  tokens(): number {
    return 1;
  }
  frame(i: number, into: FrameSink): void {
    into.put(this.head);
    into.put(Buffer.from(`${this.rest(i)}\n\n`));
  }
  private rest(i: number): string {
    return `"n":${i},"pad":"${this.pad}"}`;
  }
}

test('a socket that holds bytes it could not send yet keeps them as written while the stream goes on', async () => {
  // Small events, batches written while the socket's buffer is under its mark: the socket takes them and holds what
  // the kernel would not take. Each next chunk is made while it holds the last (in a buffer of its own).
  const events = new HeadedEvents(20_000, 'p'.repeat(900));
  const { server, port, seen } = await sseServer(() => ({ ...reply([]), events }));
  try {
    const socket = connect(port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    socket.pause();
    const s = await waitingForDrain(seen);
    const received = readToClose(socket);
    assert.is(await s.outcome, 'completed');
    const chunks = await received;
    const expected = `${Array.from({ length: events.length }, (_, i) => `data: ${events.data(i)}\n\n`).join('')}data: [DONE]\n\n`;
    same(dechunk(split(Buffer.concat(chunks)).rest).body, expected, 'the body');
  } finally {
    server.close();
  }
});

test('streams at once make their chunks in one shared buffer: each client reads its own bytes, a slow one too', async () => {
  // Unpaced batches of several streams take turns; one client reads nothing until its socket holds chunks (and the
  // buffer they were made in) while the others go on in a new one.
  const made: HeadedEvents[] = [];
  const { server, port, seen } = await sseServer(() => {
    const events = new HeadedEvents(8000, 'q'.repeat(900 + made.length * 7), `chatcmpl-s${made.length}`);
    made.push(events);
    return { ...reply([]), events };
  });
  const expected = (id: string) => {
    const events = made.find((e) => e.data(0).includes(`"${id}"`))!;
    return `${Array.from({ length: events.length }, (_, i) => `data: ${events.data(i)}\n\n`).join('')}data: [DONE]\n\n`;
  };
  try {
    const sockets = Array.from({ length: 4 }, () => {
      const socket = connect(port, '127.0.0.1');
      socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      return socket;
    });
    sockets[0]!.pause();
    const others = sockets.slice(1).map(readToClose);
    await waitFor('a writer to wait for its client', () =>
      seen.some((s) => s.socket.listenerCount('drain') > s.drainListenersBefore || s.res.listenerCount('drain') > 0),
    );
    const slow = readToClose(sockets[0]!);
    for (const chunks of [await slow, ...(await Promise.all(others))]) {
      const body = dechunk(split(Buffer.concat(chunks)).rest).body;
      const id = /"id":"([^"]+)"/.exec(body)![1]!;
      same(body, expected(id), `the body of ${id}`);
    }
    assert.equal(await Promise.all(seen.map((s) => s.outcome)), ['completed', 'completed', 'completed', 'completed']);
  } finally {
    server.close();
  }
});

test('a stream that waited on the socket leaves no listener on it for the next response', async () => {
  const big = 'z'.repeat(64 * 1024);
  const events = Array.from({ length: 128 }, (_, i) => ({ data: `${i}:${big}`, tokens: 1 }));
  const { server, port, seen } = await sseServer(() => reply(events));
  try {
    const socket = connect(port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    socket.pause();
    const s = await waitingForDrain(seen);
    socket.on('data', () => {});
    socket.resume();
    assert.is(await s.outcome, 'completed');
    await new Promise((r) => setImmediate(r));
    assert.ok(!s.socket.destroyed, 'the connection stays open for the next request');
    assert.is(s.socket.listenerCount('drain'), s.drainListenersBefore);
    socket.destroy();
  } finally {
    server.close();
  }
});

/** Timers moved by hand: `fire` runs what is armed, `ms` later on the clock. */
function handTimers(): StreamTimers & { fire(ms: number): void; armed(): boolean } {
  let now = 0;
  let next: (() => void) | undefined;
  return {
    now: () => now,
    setTimeout(fn: () => void) {
      next = fn;
      return fn;
    },
    clearTimeout(handle: unknown) {
      if (handle === next) next = undefined;
    },
    fire(ms: number) {
      now += ms;
      const fn = next;
      next = undefined;
      fn?.();
    },
    armed: () => next !== undefined,
  };
}

test('a connection destroyed before the response hears of it: the next event finds it gone and writes nothing', async () => {
  const events = Array.from({ length: 20 }, (_, i) => ({ data: `{"n":${i}}`, tokens: 1 }));
  const clock = handTimers();
  const { server, port, seen } = await sseServer(() => reply(events, 100), clock);
  try {
    const socket = connect(port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    let received = '';
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    socket.on('error', () => {});
    // The head and the first event, then two events straight to the socket.
    await waitFor('the first event', () => received.includes('"n":0'));
    for (const n of [1, 2]) {
      clock.fire(10);
      await waitFor(`event ${n}`, () => received.includes(`"n":${n}`));
    }
    const s = seen[0]!;
    assert.is(s.resWrites, 1, 'the later events went straight to the socket');
    let writes = 0;
    const write = s.socket.write;
    s.socket.write = function (this: Socket, ...args: Parameters<Socket['write']>) {
      writes++;
      return write.apply(this, args);
    } as Socket['write'];
    // The connection goes (a reset, an idle timeout): the response is told on a later tick, and the next event is due
    // before then.
    s.socket.destroy();
    assert.ok(clock.armed(), 'the next event is waiting');
    clock.fire(10);
    assert.is(writes, 0, 'nothing written to the destroyed socket');
    assert.is(await s.outcome, 'aborted');
    assert.not.ok(clock.armed(), 'no wait left behind');
    socket.destroy();
  } finally {
    server.close();
  }
});

test.run();
