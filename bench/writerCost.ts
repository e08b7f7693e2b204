/**
 * What a paced stream's event costs the mock's own code, apart from the socket and the host: `node --import tsx
 * bench/writerCost.ts [--dist DIR] [--floor] [--no-log]`. 1,000 streams of 256 tokens at 50 tps go through the
 * stream writer and the pacer of a build (DIST, by default this checkout's dist/) on a virtual clock, writing to
 * stand-in sockets that take every write whole, and the process's CPU time (not the wall clock: the host may be
 * shared) is divided by the events. `--floor` runs instead what the heap floor does per event over the same pacer
 * (one shared, ready frame written, the job queued again); `--no-log` leaves out the stream's log and lateness
 * figures. Eight rounds, the later ones after V8 has compiled the path. What Node's socket write and the kernel add
 * is the same for every server and is what `pacedProbe.ts --perf` and `--record` show.
 */
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ROOT } from './servers.js';

const { values } = parseArgs({
  options: { dist: { type: 'string' }, floor: { type: 'boolean' }, 'no-log': { type: 'boolean' } },
});
const dist = values.dist ?? join(ROOT, 'dist');
const load = (path: string) => import(pathToFileURL(join(dist, path)).href);
const { writeSse, StreamLog } = await load('pipeline/sse.js');
const { Pacer } = await load('pipeline/pacer.js');
const { chunkEvents, usageOf } = await load('text/wire.js');
const { StreamStats } = await load('domain/lateness.js');

const STREAMS = 1000;
const TOKENS = 256;
const TPS = 50;
const words = ['Hello', ' world', ',', ' this', ' is', ' a', ' paced', ' stream', ' of', ' tokens', '.'];
const pieces = Array.from({ length: TOKENS }, (_, i) => ({ text: words[i % words.length]!, tokens: 1 }));
const result = {
  content: pieces.map((p) => p.text).join(''),
  finishReason: 'length',
  completionTokens: TOKENS,
  pieces,
};

let bytes = 0;
/** A socket that takes every write whole. */
class Sock {
  writableLength = 0;
  writableCorked = false;
  writableNeedDrain = false;
  destroyed = false;
  write(b: Buffer): boolean {
    bytes += b.length;
    return true;
  }
  cork(): void {}
  uncork(): void {}
}
/** A response on such a socket, in chunked coding, that closes when ended. */
class Res extends EventEmitter {
  socket = new Sock();
  chunkedEncoding = true;
  writableLength = 0;
  writableNeedDrain = false;
  destroyed = false;
  writableFinished = false;
  write(b: Buffer): boolean {
    bytes += b.length;
    return true;
  }
  end(b?: Buffer): void {
    if (b) bytes += b.length;
    this.writableFinished = true;
    queueMicrotask(() => this.emit('close'));
  }
}

// The virtual clock: the pacer's one timer fires when the clock is moved to it.
let time = 0;
let timer: { fn: () => void; at: number } | null = null;
const base = {
  now: () => time,
  setTimeout: (fn: () => void, ms: number) => (timer = { fn, at: time + ms }),
  clearTimeout: () => void (timer = null),
  setImmediate: (fn: () => void) => queueMicrotask(fn),
  clearImmediate: () => {},
};

/** Runs the pacer's turns until nothing is queued; the CPU time it took, in ns. */
async function turns(): Promise<number> {
  const c0 = process.cpuUsage();
  while (timer) {
    const t = timer;
    timer = null;
    time = Math.max(time, t.at);
    t.fn();
    await null;
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) * 1000;
}

async function mock(): Promise<number> {
  const pacer = new Pacer(base);
  const stats = new StreamStats();
  const done: Promise<unknown>[] = [];
  for (let s = 0; s < STREAMS; s++) {
    time += 1;
    const head = {
      id: `chatcmpl-${s}abcdefghijklmnop`,
      created: 1700000000,
      model: 'gpt-4o-mini',
      fingerprint: 'fp_1',
    };
    const reply = {
      kind: 'sse',
      events: chunkEvents(head, result, usageOf(10, TOKENS), false),
      ending: 'done',
      pacing: { timeToFirstTokenMs: 200, tokensPerSecond: TPS },
    };
    const log = values['no-log']
      ? undefined
      : new StreamLog({ maxStreamEvents: 256, maxStreamEventChars: 8192 }, stats);
    done.push(writeSse(new Res(), reply, 10_000, pacer, 600_000, log, time));
  }
  const ns = await turns();
  await Promise.all(done);
  return ns;
}

async function floor(): Promise<number> {
  const pacer = new Pacer(base);
  const frame = Buffer.from(`e3\r\n${'x'.repeat(227)}\r\n`);
  for (let s = 0; s < STREAMS; s++) {
    time += 1;
    const sock = new Sock();
    let left = TOKENS + 3;
    const job = {
      due: 0,
      slot: -1,
      run() {
        sock.write(frame);
        if (--left > 0) pacer.at(job, job.due + 1000 / TPS);
      },
    };
    pacer.at(job, time + 200);
  }
  return turns();
}

const what = values.floor ? 'floor' : values['no-log'] ? 'mock without its log' : 'mock';
for (let round = 0; round < 8; round++) {
  bytes = 0;
  time = 0;
  const ns = await (values.floor ? floor() : mock());
  process.stdout.write(
    `${what}: ${(ns / (STREAMS * (TOKENS + 3))).toFixed(0)} ns of CPU an event, ${(bytes / 1e6).toFixed(1)} MB written\n`,
  );
}
