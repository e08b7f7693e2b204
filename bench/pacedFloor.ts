/**
 * The floor of the paced-streams scenario: the fewest instructions per token a Node server can spend on paced
 * streams, so that what it does not reach on time is the host's and Node's, not a server's code.
 *
 * What it is: bare `node:http` (no validation, no log, no metrics) answering every request with the mock's captured
 * stream, paced. Every stream's next write waits in one binary heap ordered by when it is due, with one Node timer
 * armed for the earliest: no timer, closure or promise per stream or per event. Each event's bytes are made once,
 * before any stream starts, already in chunked transfer coding's frame (size, CRLF, bytes, CRLF), and the events due
 * at the same time (the role chunk and the first token, the finish chunk and [DONE]) are one frame; they are shared
 * by every stream, so a token costs a heap step and one `socket.write` of a ready buffer, as the mock's writer does
 * once a stream's head is out; a stream that fell behind gets every event due in one write (corked), as the mock's
 * writer makes one chunk of them. Events are due on an absolute schedule, the first token `ttft` ms after the request
 * and token k k/tps after the first was written (as the mock's and as a client measures them), so late turns do not
 * add up. A turn writes every stream due within the next millisecond
 * (timers fire on a millisecond clock; one armed for the part of a millisecond left fires up to a millisecond late),
 * as the mock's pacer does. The head is sent when the request has been read, as the mock sends it (`--head
 * first-event` sends it with the first event instead: one write less per stream). It listens with the mock's queue
 * of 4,096 connections, so that a burst is queued, not dropped, on both.
 *
 * What it is not: a server. Every stream gets the same bytes (the mock makes each stream's own id into its events),
 * and nothing is held for a client that reads slowly (the mock stops writing to a full socket); no stream time limit,
 * no journal, no lateness figures. Like the mock's, its turns are not cut short: a turn writes everything due when it
 * began before the event loop accepts the next connection, which is the best for the streams already open and not
 * for a burst of new ones (docs/load-testing.md, "Where a first token waits").
 *
 * Usage: node pacedFloor.mjs --answer FILE --ttft MS --tps N [--head at-once|first-event]
 *   FILE is JSON {contentType, body (base64), tokensBefore}: the captured stream, and for each of its
 *   events how many token intervals after the first token it is due (written by the driver).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFileSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo, Socket } from 'node:net';
import { parseArgs } from 'node:util';

interface PacedAnswer {
  contentType: string;
  body: string;
  tokensBefore: number[];
}

/** The events grouped by when they are due: one write per group, as the mock writes what is due at once. */
export function groups(answer: PacedAnswer): { afterTokens: number; bytes: Buffer }[] {
  const events =
    Buffer.from(answer.body, 'base64')
      .toString('utf8')
      .match(/[^]*?\n\n/g) ?? [];
  const out: { afterTokens: number; bytes: string }[] = [];
  events.forEach((event, i) => {
    const afterTokens = answer.tokensBefore[i]!;
    const last = out[out.length - 1];
    if (last?.afterTokens === afterTokens) last.bytes += event;
    else out.push({ afterTokens, bytes: event });
  });
  return out.map((g) => ({ afterTokens: g.afterTokens, bytes: Buffer.from(g.bytes) }));
}

/** Bytes in chunked transfer coding's frame: the size in hex, CRLF, the bytes, CRLF. */
export const chunkFrame = (bytes: Buffer): Buffer =>
  Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]);

/** A timer fires on a millisecond clock: a stream due within this margin is written in the turn at hand. */
const EARLY_MS = 1;

/** One stream: its place in the heap and its next group of events. */
interface Stream {
  due: number;
  slot: number;
  /** The next group to write. */
  g: number;
  /** When the first token is due, then when it was written: the schedule of the others runs from it. */
  first: number;
  readonly res: ServerResponse;
  readonly socket: Socket;
  /** Whether the head has gone (then a frame may go straight to the socket). */
  headOut: boolean;
}

/** Streams by when their next write is due: a binary heap (each stream knows its slot, so a closed one leaves at once). */
class Heap {
  readonly q: Stream[] = [];

  push(s: Stream): void {
    s.slot = this.q.length;
    this.q.push(s);
    this.up(s.slot);
  }

  remove(s: Stream): void {
    const q = this.q;
    const at = s.slot;
    const last = q.pop()!;
    s.slot = -1;
    if (at === q.length) return;
    q[at] = last;
    last.slot = at;
    this.down(at);
    this.up(last.slot);
  }

  private up(at: number): void {
    const q = this.q;
    const s = q[at]!;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const p = q[parent]!;
      if (p.due <= s.due) break;
      q[at] = p;
      p.slot = at;
      at = parent;
    }
    q[at] = s;
    s.slot = at;
  }

  private down(at: number): void {
    const q = this.q;
    const s = q[at]!;
    const n = q.length;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= n) break;
      if (child + 1 < n && q[child + 1]!.due < q[child]!.due) child++;
      const c = q[child]!;
      if (c.due >= s.due) break;
      q[at] = c;
      c.slot = at;
      at = child;
    }
    q[at] = s;
    s.slot = at;
  }
}

function main(): void {
  const { values } = parseArgs({
    options: {
      answer: { type: 'string' },
      ttft: { type: 'string' },
      tps: { type: 'string' },
      head: { type: 'string', default: 'at-once' },
    },
  });
  const answer = JSON.parse(readFileSync(values.answer!, 'utf8')) as PacedAnswer;
  const ttftMs = Number(values.ttft);
  const msPerToken = 1000 / Number(values.tps);
  const headAtOnce = values.head !== 'first-event';
  const due = groups(answer);
  // Every group but the last as its ready frame; the last ends the response (its frame and the terminator).
  const frames = due.map((g) => chunkFrame(g.bytes));
  const last = due.length - 1;
  const heap = new Heap();
  let armed: NodeJS.Timeout | undefined;
  let armedFor = Number.POSITIVE_INFINITY;

  const arm = () => {
    const first = heap.q[0];
    if (!first || first.due >= armedFor) return;
    if (armed !== undefined) clearTimeout(armed);
    armedFor = first.due;
    armed = setTimeout(turn, Math.max(0, first.due - performance.now()));
  };

  /** Sends frames `from`..`to` - 1 straight to the socket: one write, however many (corked, they leave as one). */
  const send = (socket: Socket, from: number, to: number) => {
    if (to - from === 1) return void socket.write(frames[from]!);
    socket.cork();
    for (let g = from; g < to; g++) socket.write(frames[g]!);
    socket.uncork();
  };

  /**
   * Writes what of the stream is due by `until` as one write (a stream that fell behind catches up at once, as the
   * mock's writer does), then queues it for its next.
   */
  const write = (s: Stream, until: number) => {
    const g = s.g;
    // As the mock's and as a client measures it: the tokens after the first keep time from when it was written.
    if (g === 0) s.first = performance.now();
    if (!s.headOut) {
      if (g === last) return void s.res.end(due[g]!.bytes);
      s.res.write(due[g]!.bytes);
      s.headOut = true;
      // node:http uncorks on the next tick, after the whole turn: send this stream's first event now.
      if (s.socket.writableCorked) s.socket.uncork();
      s.g = g + 1;
    } else {
      let to = g + 1;
      while (to <= last && s.first + due[to]!.afterTokens * msPerToken <= until) to++;
      if (to > last) {
        if (last > g) send(s.socket, g, last);
        return void s.res.end(due[last]!.bytes);
      }
      send(s.socket, g, to);
      s.g = to;
    }
    s.due = s.first + due[s.g]!.afterTokens * msPerToken;
    heap.push(s);
  };

  function turn(): void {
    armed = undefined;
    armedFor = Number.POSITIVE_INFINITY;
    const until = performance.now() + EARLY_MS;
    const q = heap.q;
    while (q.length > 0 && q[0]!.due <= until) {
      const s = q[0]!;
      heap.remove(s);
      write(s, until);
    }
    arm();
  }

  const serve = (res: ServerResponse) => {
    const socket = res.socket;
    if (!socket || socket.destroyed) return;
    const first = performance.now() + ttftMs;
    res.writeHead(200, { 'content-type': answer.contentType, 'cache-control': 'no-cache' });
    if (headAtOnce) res.flushHeaders();
    const s: Stream = { due: first, slot: -1, g: 0, first, res, socket, headOut: headAtOnce };
    res.on('close', () => {
      if (s.slot >= 0) heap.remove(s);
    });
    heap.push(s);
    arm();
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => serve(res));
  });
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
    process.stdout.write(`paced floor listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  process.once('SIGTERM', () => process.exit(0));
}

// Run as a script (the bench's); imported (the tests'), it only lends its framing. The module's URL is the real path:
// the script's may pass through a symbolic link (a node_modules shared by several checkouts).
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === realpathSync(resolve(process.argv[1]))) main();
