/**
 * The load client of the paced-streams scenario: raw `node:net` sockets, one per stream, each writing the
 * same request bytes and noting, per read, the time once and how many events ended in it. Nothing is
 * parsed or allocated per event, so that thousands of streams of 50 events a second stay cheap for the client's core.
 */
import { connect } from 'node:net';
import { EventCounter, LastBytes, type StreamRecord } from './pacing.js';

const DONE = Buffer.from('data: [DONE]\n\n');
// The status code's digits in "HTTP/1.1 200 OK".
const STATUS_AT = 9;
// Enough of a response's end to hold [DONE] and the chunked terminator after it.
const TAIL = 32;
/**
 * Where every socket reads into: a read is counted and done with before the next one starts, so one
 * buffer serves them all, and no read allocates (Node's `onread`, which also skips the stream machinery).
 */
const READS = Buffer.allocUnsafe(256 * 1024);

/** What one run asks for: `count` streams of `request`, their starts spread evenly over `rampMs`. */
export interface PacedLoad {
  readonly url: string;
  readonly request: Buffer;
  readonly count: number;
  readonly rampMs: number;
  /** Events a complete stream has ([DONE] included). */
  readonly events: number;
  /** Streams still open this long after the first start are ended and counted as errors ('timeout'). */
  readonly timeoutMs: number;
}

/** Opens one stream and resolves with its record when the connection closes. */
function stream(url: URL, request: Buffer, events: number, open: Set<() => void>): Promise<StreamRecord> {
  const record: StreamRecord = {
    sentAt: Number.NaN,
    arrivals: new Float64Array(events),
    events: 0,
    status: 0,
    complete: false,
  };
  const counter = new EventCounter();
  // The read buffer is reused: [DONE] must be in the last bytes kept at the end.
  const tail = new LastBytes(TAIL);
  // Returns true: keep reading (false would pause the socket).
  const read = (n: number, buffer: Buffer): boolean => {
    const t = performance.now();
    if (record.status === 0)
      record.status = n < STATUS_AT + 3 ? -1 : Number(buffer.toString('latin1', STATUS_AT, STATUS_AT + 3));
    const ended = counter.feed(buffer.subarray(0, n));
    for (let i = 0; i < ended; i++) {
      if (record.events < events) record.arrivals[record.events] = t;
      record.events++;
    }
    tail.keep(buffer, n);
    return true;
  };
  return new Promise((resolve) => {
    const socket = connect({
      port: Number(url.port),
      host: url.hostname,
      noDelay: true,
      onread: { buffer: READS, callback: (n, buffer) => read(n, buffer as Buffer) },
    });
    const giveUp = () => {
      record.error ??= 'timeout';
      socket.destroy();
    };
    open.add(giveUp);
    socket.on('connect', () => {
      record.sentAt = performance.now();
      socket.write(request);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => (record.error ??= err.code ?? err.message));
    socket.on('close', () => {
      open.delete(giveUp);
      record.complete =
        record.error === undefined && record.status === 200 && record.events === events && tail.bytes().includes(DONE);
      resolve(record);
    });
  });
}

/** Runs the streams (each start on its own timer against the ramp's schedule) and returns their records. */
export async function pacedLoad(load: PacedLoad): Promise<{ records: StreamRecord[]; seconds: number }> {
  const url = new URL(load.url);
  const open = new Set<() => void>();
  const started = performance.now();
  const limit = setTimeout(() => {
    for (const giveUp of [...open]) giveUp();
  }, load.timeoutMs);
  const streams = Array.from(
    { length: load.count },
    (_, i) =>
      new Promise<StreamRecord>((resolve) => {
        const due = started + (load.rampMs * i) / load.count;
        setTimeout(() => resolve(stream(url, load.request, load.events, open)), due - performance.now());
      }),
  );
  const records = await Promise.all(streams);
  clearTimeout(limit);
  return { records, seconds: (performance.now() - started) / 1000 };
}
