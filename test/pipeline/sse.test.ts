import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { LAST_EVENT_MS, StreamLog, writeSse } from '../../src/pipeline/sse.js';
import { EARLY_MS } from '../../src/pipeline/pacer.js';
import { HandTimers, TrackedTimers } from '../support/timers.js';
import { StreamStats } from '../../src/domain/lateness.js';
import { packageLimits } from '../../src/domain/limits.js';
import { EventList, type Reply, type SseEvent } from '../../src/contract/reply.js';

type SseReply = Extract<Reply, { kind: 'sse' }>;

/** A ServerResponse stand-in that records writes and closes the way node:http does (asynchronously). */
class FakeRes extends EventEmitter {
  writes: string[] = [];
  destroyed = false;
  ended = false;
  writableFinished = false;
  writableNeedDrain = false;
  /** When set, every write after this many fills the buffer. */
  drainAfter = Infinity;
  /** When set, the end's bytes never leave (a full buffer toward the client): no 'close' comes. */
  stuck = false;
  write(bytes: string | Buffer, done?: () => void): boolean {
    if (done) setImmediate(done); // node:http calls back once the bytes are handed to the socket
    const chunk = bytes.toString(); // the writer writes bytes; the test reads them as text
    if (chunk === '') return !this.writableNeedDrain;
    this.writes.push(chunk);
    if (this.writes.length >= this.drainAfter) this.writableNeedDrain = true;
    return !this.writableNeedDrain;
  }
  end(chunk?: string | Buffer): void {
    if (chunk !== undefined) this.writes.push(chunk.toString());
    this.ended = true;
    if (this.stuck) return;
    this.writableFinished = true;
    setImmediate(() => this.emit('close'));
  }
  destroy(): void {
    this.destroyed = true;
    setImmediate(() => this.emit('close'));
  }
  /** The client goes away: node:http emits 'close' without finishing the response. */
  hangUp(): void {
    this.destroyed = true;
    this.emit('close');
  }
  drain(): void {
    this.writableNeedDrain = false;
    this.drainAfter = Infinity;
    this.emit('drain');
  }
}

const ev = (data: string, tokens = 1): SseEvent => ({ data, tokens });
const reply = (events: SseEvent[], extra: Partial<SseReply> = {}): SseReply => ({
  kind: 'sse',
  events: new EventList(events),
  ending: 'done',
  pacing: { timeToFirstTokenMs: 0, tokensPerSecond: 0 },
  ...extra,
});
const asRes = (r: FakeRes) => r as unknown as ServerResponse;
/** What `done` settled with within a few turns of the event loop, else 'still pending': a lost wait fails, not hangs. */
async function settled<T>(done: Promise<T>): Promise<T | 'still pending'> {
  let turns = 5;
  const pending = new Promise<'still pending'>((resolve) => {
    const turn = () => (--turns > 0 ? setImmediate(turn) : resolve('still pending'));
    setImmediate(turn);
  });
  return Promise.race([done, pending]);
}

/** The bytes of these events, as one write carries them. */
const frames = (...events: SseEvent[]) => events.map((e) => `data: ${e.data}\n\n`).join('');

test('without pacing: each batch of 8 events is one write, the next after yielding, [DONE] with the last', async () => {
  const res = new FakeRes();
  const events = Array.from({ length: 20 }, (_, i) => ev(`{"n":${i}}`));
  const done = writeSse(asRes(res), reply(events), 1000);
  // A batch leaves before the writer yields: 20 events are never one synchronous burst.
  assert.equal(res.writes, [frames(...events.slice(0, 8))]);
  assert.is(await done, 'completed');
  assert.equal(res.writes, [
    frames(...events.slice(0, 8)),
    frames(...events.slice(8, 16)),
    `${frames(...events.slice(16))}data: [DONE]\n\n`,
  ]);
});

test("pacing: each wait is the event's tokens at the configured rate, on a schedule that late timers do not stretch", async () => {
  const res = new FakeRes();
  const timers = new HandTimers(1000);
  // tps 50 = 20 ms per token; the role event carries no token, the third event two.
  const events = [ev('role', 0), ev('a'), ev('bc', 2), ev('d'), ev('finish', 0)];
  const done = writeSse(
    asRes(res),
    reply(events, { pacing: { timeToFirstTokenMs: 300, tokensPerSecond: 50 } }),
    1000,
    timers,
  );
  assert.is(res.writes.length, 0, 'nothing before the time to first token');
  assert.equal(timers.requested, [300]);
  timers.fire();
  assert.equal(res.writes, ['data: role\n\ndata: a\n\n'], 'the role and the first token leave together, in one write');
  timers.fire();
  assert.is(res.writes.length, 2);
  timers.fire(15); // this timer ran 15 ms late
  assert.is(res.writes.length, 3);
  timers.fire();
  // "bc" waits 40 ms (two tokens); "d" waits 20 ms less the 15 ms its timer was late.
  assert.equal(timers.requested, [300, 20, 40, 20 - 15], 'the late timer is made up on the next wait');
  assert.equal(res.writes.slice(1), ['data: bc\n\n', 'data: d\n\n', 'data: finish\n\ndata: [DONE]\n\n']);
  assert.is(await done, 'completed');
  assert.is(timers.pending.size, 0);
});

test('lateness: each paced event is measured against its schedule, the first against the head plus the time to first token', async () => {
  const res = new FakeRes();
  const timers = new HandTimers(1000);
  const stats = new StreamStats();
  const log = new StreamLog(packageLimits().records, stats);
  const events = [ev('role', 0), ev('a'), ev('b'), ev('c'), ev('finish', 0)];
  const done = writeSse(
    asRes(res),
    reply(events, { pacing: { timeToFirstTokenMs: 300, tokensPerSecond: 50 } }),
    1000,
    timers,
    Number.POSITIVE_INFINITY,
    log,
  );
  timers.fire(4); // the first event 4 ms after the head's time plus 300 ms
  timers.fire(); // "b", on time (its schedule runs from the first event as written)
  timers.fire(12); // "c", 12 ms late
  timers.fire(); // "finish", on time again: the late turn is made up
  assert.is(await done, 'completed');
  assert.is(log.worstLateMs, 12);
  assert.equal(stats.firstEvents.figures(), { count: 1, p50Ms: 4, p99Ms: 4, maxMs: 4 });
  // Four events after the first ("a" left with the role event, in its write): three on time, one 12 ms late.
  const after = stats.events.figures();
  assert.is(after.count, 4);
  assert.is(after.p50Ms, 0);
  assert.is(after.maxMs, 12);
});

test('the time to first token runs from when the request arrived, not from when the writer began', async () => {
  const res = new FakeRes();
  const timers = new HandTimers(1000);
  const stats = new StreamStats();
  const log = new StreamLog(packageLimits().records, stats);
  const arrived = timers.time - 40; // the request took 40 ms to read, check and answer
  const done = writeSse(
    asRes(res),
    reply([ev('role', 0), ev('a'), ev('finish', 0)], { pacing: { timeToFirstTokenMs: 300, tokensPerSecond: 50 } }),
    1000,
    timers,
    Number.POSITIVE_INFINITY,
    log,
    arrived,
  );
  assert.equal(timers.requested, [260]);
  timers.fire();
  timers.fire();
  assert.is(await done, 'completed');
  assert.is(stats.firstEvents.figures().maxMs, 0);
});

test("a profile's gaps: drawn per event as it is due, from the event's tokens, in place of the rate; lateness still kept", async () => {
  const res = new FakeRes();
  const timers = new HandTimers(1000);
  const log = new StreamLog(packageLimits().records, new StreamStats());
  const asked: number[] = [];
  const drawn = [30, 5, 70, 0, 0];
  const gap = (tokens: number) => {
    asked.push(tokens);
    return drawn.shift()!;
  };
  const events = [ev('role', 0), ev('a'), ev('bc', 2), ev('d'), ev('finish', 0)];
  const done = writeSse(
    asRes(res),
    reply(events, { pacing: { timeToFirstTokenMs: 100, tokensPerSecond: 50, gap } }),
    1000,
    timers,
    Number.POSITIVE_INFINITY,
    log,
  );
  assert.equal(asked, [], 'no gap is drawn before its event is written');
  timers.fire();
  // The role event carries no token (a gap of its draw for 0 tokens, here 30: the scripted source decides).
  timers.fire();
  timers.fire(3); // 3 ms late
  timers.fire();
  assert.is(await done, 'completed');
  assert.equal(asked, [0, 1, 2, 1, 0], 'one call per event, with the tokens of the event just written');
  assert.equal(timers.requested, [100, 30, 5, 70 - 3], 'the rate (tps 50) is not used; a late timer is made up');
  assert.is(log.worstLateMs, 3);
});

test('lateness: an unpaced stream keeps no time, so nothing is measured', async () => {
  const stats = new StreamStats();
  const log = new StreamLog(packageLimits().records, stats);
  const events = Array.from({ length: 20 }, (_, i) => ev(String(i)));
  assert.is(await writeSse(asRes(new FakeRes()), reply(events), 1000, undefined, undefined, log), 'completed');
  assert.is(log.worstLateMs, undefined);
  assert.is(stats.events.count + stats.firstEvents.count, 0);
});

test('a client that hangs up mid-stream: resolves "aborted" at once, its timer is cleared, nothing more is written', async () => {
  const res = new FakeRes();
  const timers = new HandTimers(1000);
  const done = writeSse(
    asRes(res),
    reply([ev('a'), ev('b'), ev('c')], { pacing: { timeToFirstTokenMs: 0, tokensPerSecond: 10 } }),
    1000,
    timers,
  );
  assert.is(timers.pending.size, 1);
  res.hangUp();
  assert.is(await done, 'aborted');
  assert.is(timers.pending.size, 0);
  assert.equal(res.writes, ['data: a\n\n']);
  assert.is(res.listenerCount('close') + res.listenerCount('drain'), 0, 'listeners removed');
});

/** The process's active timers (Node's own count: cleared ones are gone from it). */
const realTimeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test('with real timers: an aborted paced stream leaves no timer behind and writes nothing more', async () => {
  const res = new FakeRes();
  const timers = new TrackedTimers();
  const before = realTimeouts();
  const done = writeSse(
    asRes(res),
    reply([ev('a'), ev('b'), ev('c')], { pacing: { timeToFirstTokenMs: 0, tokensPerSecond: 50 } }),
    1000,
    timers,
  );
  assert.is(timers.live.size, 1, 'the pacing timer is pending');
  assert.is(realTimeouts(), before + 1, "the process's own timer is armed");
  res.hangUp();
  assert.is(await done, 'aborted');
  assert.is(timers.live.size, 0);
  // No timer of the process is left to write later: Node's own list of active timers is as it was.
  assert.is(realTimeouts(), before);
  assert.is(res.writes.length, 1);
});

test('an unpaced stream aborted between batches leaves no immediate behind', async () => {
  const res = new FakeRes();
  const timers = new TrackedTimers();
  const done = writeSse(asRes(res), reply(Array.from({ length: 30 }, () => ev('x'))), 1000, timers);
  assert.is(timers.live.size, 1, 'the next batch is scheduled');
  res.hangUp();
  assert.is(await done, 'aborted');
  assert.is(timers.live.size, 0);
  await new Promise((r) => setImmediate(r));
  assert.is(res.writes.length, 1);
});

test('backpressure: writing stops while the client buffer is full and resumes on drain', async () => {
  const res = new FakeRes();
  res.drainAfter = 2;
  const events = Array.from({ length: 40 }, (_, i) => ev(String(i)));
  const done = writeSse(asRes(res), reply(events), 1000);
  for (let turn = 0; turn < 4; turn++) await new Promise((r) => setImmediate(r));
  assert.is(res.writes.length, 2, 'held while the buffer is full');
  res.drain();
  assert.is(await done, 'completed');
  assert.is(res.writes.length, 5);
  assert.is(res.writes.join(''), `${frames(...events)}data: [DONE]\n\n`);
});

test('cut: stops after stopAfter events and destroys the connection without [DONE]', async () => {
  const res = new FakeRes();
  const outcome = await writeSse(asRes(res), reply([ev('a'), ev('b'), ev('c')], { ending: 'cut', stopAfter: 2 }), 1000);
  assert.is(outcome, 'cut');
  assert.ok(res.destroyed);
  assert.equal(res.writes, ['data: a\n\ndata: b\n\n']);
});

test('stall: holds the stream open until the client leaves, or until the stall maximum passes', async () => {
  const res = new FakeRes();
  const timers = new HandTimers(1000);
  const left = writeSse(asRes(res), reply([ev('a'), ev('b')], { ending: 'stall', stopAfter: 1 }), 5000, timers);
  assert.equal(timers.requested, [5000]);
  res.hangUp();
  assert.is(await left, 'stalled');
  assert.is(timers.pending.size, 0);

  const res2 = new FakeRes();
  const timers2 = new HandTimers(1000);
  const maxed = writeSse(asRes(res2), reply([ev('a')], { ending: 'stall', stopAfter: 5 }), 5000, timers2);
  timers2.fire();
  assert.is(await maxed, 'stalled');
  assert.ok(res2.destroyed);
  assert.equal(res2.writes, ['data: a\n\n']);
});

test('stall at shutdown: the response ends cleanly, without [DONE], instead of being dropped', async () => {
  const res = new FakeRes();
  const stop = new AbortController();
  const timers = Object.assign(new HandTimers(1000), { stopping: stop.signal });
  const held = writeSse(asRes(res), reply([ev('a'), ev('b')], { ending: 'stall', stopAfter: 1 }), 5000, timers);
  stop.abort(); // the stream timers then run the stall's wait at once, without waiting for the clock
  assert.is(await held, 'stalled');
  assert.ok(res.ended);
  assert.not.ok(res.destroyed);
  assert.equal(res.writes, ['data: a\n\n']);
});

/** The error of the time-limit event a stream ends with, if its last write is one. */
function timeLimitError(res: FakeRes): { code: string; type: string; message: string } | undefined {
  const last = res.writes.at(-1) ?? '';
  const m = /data: (\{"error".*)\n\n$/.exec(last);
  return m ? JSON.parse(m[1]!).error : undefined;
}

test('the stream time limit: a paced stream still running at streamMaxMs ends with an error event, not [DONE]', async () => {
  const res = new FakeRes();
  const timers = new HandTimers(1000);
  // 1 token per second, 10 events: 9 s of pacing against a 2.5 s limit.
  const events = Array.from({ length: 10 }, (_, i) => ev(`{"n":${i}}`));
  const done = writeSse(
    asRes(res),
    reply(events, { pacing: { timeToFirstTokenMs: 0, tokensPerSecond: 1 } }),
    1000,
    timers,
    2500,
  );
  timers.fire();
  timers.fire();
  assert.equal(timers.requested, [1000, 1000, 500], 'the last wait is cut to the deadline');
  timers.fire();
  assert.is(await done, 'timed-out');
  assert.ok(res.ended);
  assert.not.ok(res.writes.join('').includes('[DONE]'));
  assert.equal(res.writes.slice(0, 3), [frames(events[0]!), frames(events[1]!), frames(events[2]!)]);
  const error = timeLimitError(res);
  assert.is(error?.code, 'stream_time_limit');
  assert.is(error?.type, 'server_error');
  assert.match(error!.message, /2500 ms \(timeouts\.streamMaxMs\)/);
  assert.is(timers.pending.size, 0);
});

test('the stream time limit bounds every wait: a time to first token, a tiny rate and a stall longer than it', async () => {
  for (const [name, extra, stall] of [
    ['ttft', { pacing: { timeToFirstTokenMs: 600000, tokensPerSecond: 0 } }, 1000],
    ['tps', { pacing: { timeToFirstTokenMs: 0, tokensPerSecond: 1e-18 } }, 1000],
    ['stall', { ending: 'stall', stopAfter: 1 }, 3_000_000_000],
  ] as const) {
    const res = new FakeRes();
    const timers = new HandTimers(1000);
    const done = writeSse(asRes(res), reply([ev('a'), ev('b')], extra as Partial<SseReply>), stall, timers, 3000);
    while (timers.pending.size) timers.fire();
    assert.is(await done, 'timed-out', name);
    assert.ok(Math.max(...timers.requested) <= 3000, `${name}: ${timers.requested.join(', ')}`);
    assert.is(timeLimitError(res)?.code, 'stream_time_limit', name);
  }
});

test('the stream time limit with a client that reads nothing: the connection is closed at the limit', async () => {
  const res = new FakeRes();
  res.drainAfter = 1;
  const timers = new HandTimers(1000);
  const done = writeSse(asRes(res), reply(Array.from({ length: 40 }, () => ev('x'))), 1000, timers, 4000);
  for (let turn = 0; turn < 3; turn++) await new Promise((r) => setImmediate(r));
  assert.equal(timers.requested, [4000], 'waiting for drain, watched up to the limit');
  timers.fire();
  assert.is(await done, 'timed-out');
  assert.ok(res.destroyed);
  assert.is(res.listenerCount('drain'), 0);
});

test('a stream that drains in time clears its watch and completes', async () => {
  const res = new FakeRes();
  res.drainAfter = 1;
  const timers = new HandTimers(1000);
  const done = writeSse(asRes(res), reply(Array.from({ length: 20 }, () => ev('x'))), 1000, timers, 4000);
  for (let turn = 0; turn < 3; turn++) await new Promise((r) => setImmediate(r));
  res.drain();
  assert.is(await done, 'completed');
  assert.is(timers.pending.size, 0);
});

test('the time limit holds when the scheduler runs the watch of a client that reads nothing up to EARLY_MS early', async () => {
  const res = new FakeRes();
  res.drainAfter = 1;
  const timers = new HandTimers(1000);
  const done = writeSse(asRes(res), reply(Array.from({ length: 40 }, () => ev('x'))), 1000, timers, 4000);
  for (let turn = 0; turn < 3; turn++) await new Promise((r) => setImmediate(r));
  timers.fire(-EARLY_MS / 2); // the timer fires half a millisecond before the deadline: the pacer runs the watch now
  assert.is(await settled(done), 'timed-out');
  assert.ok(res.destroyed);
  assert.is(timers.pending.size, 0);
});

test('a paced wait or a stall cut to the deadline and run early ends the stream timed out', async () => {
  for (const [name, extra] of [
    ['pacing', { pacing: { timeToFirstTokenMs: 0, tokensPerSecond: 1 } }],
    ['stall', { ending: 'stall', stopAfter: 1 }],
  ] as const) {
    const res = new FakeRes();
    const timers = new HandTimers(1000);
    const done = writeSse(
      asRes(res),
      reply([ev('a'), ev('b'), ev('c')], extra as Partial<SseReply>),
      60_000,
      timers,
      500,
    );
    timers.fire(-EARLY_MS / 2);
    assert.is(await settled(done), 'timed-out', name);
    assert.is(timeLimitError(res)?.code, 'stream_time_limit', name);
  }
});

/** Three events at a token a second against a limit of 1.5 s, run to the limit: the stream's promise. */
function toTheLimit(res: FakeRes, timers: HandTimers): Promise<string> {
  const pacing = { timeToFirstTokenMs: 0, tokensPerSecond: 1 };
  const done = writeSse(asRes(res), reply([ev('a'), ev('b'), ev('c')], { pacing }), 1000, timers, 1500);
  timers.fire();
  timers.fire();
  return done;
}

test('at the time limit, a client with bytes still waiting in its socket is behind: its connection is closed', async () => {
  const res = Object.assign(new FakeRes(), { socket: { writableLength: 120, writableNeedDrain: false } });
  assert.is(await toTheLimit(res, new HandTimers(1000)), 'timed-out');
  assert.ok(res.destroyed);
  assert.is(timeLimitError(res), undefined, 'no last event written for a client that would not read it');
});

test('the last event of a stream at its limit that cannot leave: the connection is closed LAST_EVENT_MS later', async () => {
  const res = new FakeRes();
  res.stuck = true;
  const timers = new HandTimers(1000);
  const done = toTheLimit(res, timers);
  assert.is(timeLimitError(res)?.code, 'stream_time_limit');
  assert.not.ok(res.destroyed);
  assert.equal(timers.requested.at(-1), LAST_EVENT_MS);
  timers.fire();
  assert.is(await done, 'timed-out');
  assert.ok(res.destroyed);
  assert.is(timers.pending.size, 0);
});

test('malformedAt replaces that event with broken JSON', async () => {
  const res = new FakeRes();
  await writeSse(asRes(res), reply([ev('{"a":1}'), ev('{"b":2}')], { malformedAt: 1 }), 1000);
  const [first, broken, done, rest] = res.writes.join('').split('\n\n');
  assert.is(first, 'data: {"a":1}');
  assert.throws(() => JSON.parse(broken!.slice(6)));
  assert.equal([done, rest], ['data: [DONE]', '']);
});

test("the stream's log: the texts it makes again when read are those written, with their times and the bounds", async () => {
  const res = new FakeRes();
  const timers = new HandTimers(1000);
  const log = new StreamLog({ maxStreamEvents: 256, maxStreamEventChars: 8192 });
  const events = [ev('{"a":1}'), ev('{"b":2}'), ev('{"c":3}')];
  const done = writeSse(
    asRes(res),
    reply(events, { malformedAt: 1, pacing: { timeToFirstTokenMs: 0, tokensPerSecond: 10 } }),
    1000,
    timers,
    Number.POSITIVE_INFINITY,
    log,
  );
  timers.fire(0.25);
  timers.fire();
  timers.fire();
  assert.is(await done, 'completed');
  const written = res.writes
    .join('')
    .split('\n\n')
    .filter(Boolean)
    .map((e) => e.slice('data: '.length));
  assert.equal(
    log.events.map((e) => e.data),
    written,
    'each event as written: the broken one and [DONE] included',
  );
  assert.equal(
    log.events.map((e) => e.ms),
    [0, 100.3, 200, 300],
    'in ms from the head, to a tenth',
  );
  assert.is(log.total, 4);
  // Bounds: the log stops keeping texts past its events or characters, and counts the rest.
  const few = new StreamLog({ maxStreamEvents: 2, maxStreamEventChars: 8192 });
  const short = new StreamLog({ maxStreamEvents: 256, maxStreamEventChars: 10 });
  const list = new EventList(events);
  for (const l of [few, short]) for (let n = 0; n < 3; n++) l.noteEvent(list, n, n);
  assert.equal(
    few.events.map((e) => e.data),
    ['{"a":1}', '{"b":2}'],
  );
  assert.equal(
    short.events.map((e) => e.data),
    ['{"a":1}', '{"b":2}'],
    'the event that passes the characters is kept (the journal cuts it)',
  );
  assert.equal([few.total, short.total], [3, 3]);
});

test.run();
