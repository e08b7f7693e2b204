import { fstatSync, openSync, write, constants } from 'node:fs';

/** Options of a LogWriter. */
interface LogWriterOptions {
  /** Bytes waiting to be written past which new lines are dropped (counted). Default 16 MiB. */
  readonly maxPending?: number;
  /** Bytes gathered into one write(2) at most. Default 1 MiB. */
  readonly maxWrite?: number;
  /** How long to wait before trying again when the output is full (EAGAIN). Default 50 ms. */
  readonly retryMs?: number;
  /** Bytes that make a write go out at once; fewer wait up to `delayMs` for more. Default 64 KiB. */
  readonly minWrite?: number;
  /** How long lines may wait to be gathered into a larger write. Default 20 ms. */
  readonly delayMs?: number;
}

/** Encoded lines waiting to be written, and how many lines they hold. */
interface Chunk {
  readonly bytes: Buffer;
  readonly lines: number;
}

/**
 * Log lines written to a file descriptor asynchronously, in batches, off the request path: lines wait until
 * `minWrite` bytes (64 KiB) have gathered or `delayMs` (20 ms) has passed, then go out in one write(2), and
 * at most one write (or one wait for it) is pending at a time, so a server logging every request writes
 * about once per delay, not once per turn of the event loop. The lines waiting are bounded: when the
 * output cannot keep up (a pipe nobody reads), a new line past the bound is dropped and counted, and a
 * warning with the count is written as soon as the output takes lines again. Nothing is lost silently.
 *
 * A line is encoded into a buffer as it is given, and the string is not kept: a server logging every
 * request would otherwise hold a few hundred lines between writes, each a tree of the pieces it was
 * built from, for the garbage collector to copy, and then join and encode them all again.
 */
export class LogWriter {
  /** Lines dropped since the writer was made because the output did not keep up (or failed). */
  dropped = 0;
  private reported = 0;
  /** The buffer lines are encoded into, `used` bytes of it so far, holding `lines` lines. */
  private cur: Buffer;
  private used = 0;
  private lines = 0;
  /** Full buffers waiting, oldest first, and their bytes. */
  private ready: Chunk[] = [];
  private readyBytes = 0;
  /** An empty buffer of the fill size, kept from a finished write for the next one. */
  private spare: Buffer | undefined;
  /** The write in flight, or waiting to be tried again. */
  private chunk: Buffer | undefined;
  private chunkLines = 0;
  private writing = false;
  /** A call of `next` is pending: at most one ever is (`timer` when it waits, else an immediate). */
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  /** The last write failed for good (EPIPE): no warning is written into an output that is gone. */
  private failing = false;
  private waiters: (() => void)[] = [];
  /** Writes the lines kept aside by their writer (see writeLater), when some are. */
  private gatherer: (() => void) | undefined;
  private readonly maxPending: number;
  private readonly maxWrite: number;
  private readonly retryMs: number;
  private readonly minWrite: number;
  private readonly delayMs: number;
  private readonly fillSize: number;

  constructor(
    private readonly fd: number,
    options: LogWriterOptions = {},
  ) {
    this.maxPending = options.maxPending ?? 16 * 1024 * 1024;
    this.maxWrite = options.maxWrite ?? 1024 * 1024;
    this.retryMs = options.retryMs ?? 50;
    this.minWrite = options.minWrite ?? 64 * 1024;
    this.delayMs = options.delayMs ?? 20;
    this.fillSize = Math.max(4096, Math.min(this.minWrite, this.maxWrite));
    this.cur = Buffer.allocUnsafeSlow(this.fillSize);
  }

  /** Bytes waiting or being written. */
  private get pending(): number {
    return this.used + this.readyBytes + (this.chunk?.length ?? 0);
  }

  /** Queues one line (ending in a newline); false when it was dropped. */
  write(line: string): boolean {
    this.gather();
    if (this.pending + line.length > this.maxPending) return this.drop();
    // A character is 1 to 3 bytes in UTF-8 (a surrogate pair, 2 characters, is 4): room for 3 each is enough.
    if (!this.fits(line.length * 3)) return this.own(Buffer.from(line, 'utf8'));
    this.used += this.cur.write(line, this.used, 'utf8');
    return this.added();
  }

  /**
   * Queues one line (ending in a newline) that `fill` writes as bytes into a buffer at `at`, in at most
   * `most` bytes, returning where it ended; false when it was dropped. A line written this way is never
   * a string: no text to build, encode and collect for a line whose pieces are bytes already.
   */
  writeWith(most: number, fill: (buf: Buffer, at: number) => number): boolean {
    this.gather();
    if (this.pending + most > this.maxPending) return this.drop();
    if (!this.fits(most)) {
      const own = Buffer.allocUnsafe(most);
      return this.own(own.subarray(0, fill(own, 0)));
    }
    this.used = fill(this.cur, this.used);
    return this.added();
  }

  /**
   * Says that lines are kept aside by their writer, to be written by `gather` (with write or writeWith)
   * at the last moment: just before the next write is taken, at a flush, and before any line given
   * directly, so every line keeps its place. A write is scheduled as for a line given.
   *
   * A server that logs every request uses it to make its lines a batch at a time, in one loop, instead
   * of one at a time between the requests' own work: run between requests, the line's code and the
   * bytes it copies have left the caches, and the same line costs several times what it costs in a loop.
   */
  writeLater(gather: () => void): void {
    this.gatherer = gather;
    if (!this.writing && !this.scheduled) this.schedule();
  }

  /** Has the lines kept aside written in now. */
  private gather(): void {
    const gather = this.gatherer;
    if (gather === undefined) return;
    this.gatherer = undefined;
    gather();
  }

  private drop(): boolean {
    this.dropped++;
    return false;
  }

  /** Whether `most` bytes fit in the buffer being filled, after starting a new one when they do not fit what is left of
   * it. */
  private fits(most: number): boolean {
    if (most <= this.cur.length - this.used) return true;
    this.seal();
    return most <= this.cur.length;
  }

  /** A line longer than a buffer goes in its own. */
  private own(bytes: Buffer): boolean {
    this.ready.push({ bytes, lines: 1 });
    this.readyBytes += bytes.length;
    if (!this.writing && !this.scheduled) this.schedule();
    return true;
  }

  private added(): boolean {
    this.lines++;
    if (!this.writing && !this.scheduled) this.schedule();
    return true;
  }

  /** Moves the lines encoded so far to the ready list, and starts a new buffer. */
  private seal(): void {
    if (this.used === 0) return;
    this.ready.push({ bytes: this.cur.subarray(0, this.used), lines: this.lines });
    this.readyBytes += this.used;
    this.cur = this.spare ?? Buffer.allocUnsafeSlow(this.fillSize);
    this.spare = undefined;
    this.used = 0;
    this.lines = 0;
  }

  /**
   * The next write: at once when a large one is ready, else after a short wait for more lines. Each
   * write(2) runs on libuv's pool and costs two thread switches besides the copy, and a server pinned to
   * one core pays them on its own core: a few large writes cost far less than many small ones.
   */
  private schedule(): void {
    this.scheduled = true;
    if (this.used + this.readyBytes >= this.minWrite || this.waiters.length) setImmediate(this.next);
    else this.timer = setTimeout(this.next, this.delayMs).unref();
  }

  /** Calls `done` once every queued line has been written (or dropped). */
  flush(done?: (err?: Error) => void): void {
    if (!done) return;
    if (this.idle()) process.nextTick(done);
    else {
      this.waiters.push(() => done());
      // At once, not after the gathering delay: that timer does not keep the process alive, and a
      // process that flushes before it exits has nothing else that does. A wait pending is cut short,
      // not doubled: two pending calls would each start a write, and go on scheduling one another.
      if (!this.writing && (!this.scheduled || this.timer !== undefined)) {
        clearTimeout(this.timer);
        this.timer = undefined;
        this.scheduled = true;
        setImmediate(this.next);
      }
    }
  }

  private idle(): boolean {
    return (
      !this.writing &&
      !this.scheduled &&
      this.chunk === undefined &&
      this.used === 0 &&
      this.ready.length === 0 &&
      (this.failing || this.dropped === this.reported)
    );
  }

  /** Takes up to maxWrite bytes of waiting lines (at least one buffer), after a warning when lines were dropped since
   * the last one. */
  private take(): void {
    this.gather();
    this.seal();
    const taken: Buffer[] = [];
    let bytes = 0;
    let count = 0;
    while (this.ready.length && (taken.length === 0 || bytes + this.ready[0]!.bytes.length <= this.maxWrite)) {
      const next = this.ready.shift()!;
      taken.push(next.bytes);
      bytes += next.bytes.length;
      count += next.lines;
    }
    this.readyBytes -= bytes;
    if (this.dropped > this.reported && !this.failing) {
      const dropped = this.dropped - this.reported;
      this.reported = this.dropped;
      taken.unshift(
        Buffer.from(
          `{"level":"warn","time":"${new Date().toISOString()}","dropped":${dropped},"droppedTotal":${this.dropped},` +
            `"msg":"log lines dropped: the output did not keep up"}\n`,
        ),
      );
      count++;
    }
    if (count) {
      this.chunk = taken.length === 1 ? taken[0] : Buffer.concat(taken);
      this.chunkLines = count;
    }
  }

  private readonly next = (): void => {
    this.timer = undefined;
    // Lines a gather adds while they are taken schedule no other call: they go out with this write.
    this.scheduled = true;
    if (this.chunk === undefined) this.take();
    this.scheduled = false;
    if (this.chunk === undefined) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
      return;
    }
    this.writing = true;
    write(this.fd, this.chunk, 0, this.chunk.length, null, this.written);
  };

  /** A written chunk's buffer, when it is a whole fill buffer, is kept to be filled again. */
  private recycle(done: Buffer): void {
    if (
      this.spare === undefined &&
      done.buffer.byteLength === this.fillSize &&
      done.byteOffset === 0 &&
      done.buffer !== this.cur.buffer
    ) {
      this.spare = Buffer.from(done.buffer, 0, this.fillSize);
    }
  }

  private readonly written = (err: NodeJS.ErrnoException | null, n: number): void => {
    this.writing = false;
    if (err) {
      if (err.code === 'EAGAIN' || err.code === 'EBUSY') {
        // The output is full: try again shortly; new lines queue up to the bound meanwhile.
        this.scheduled = true;
        this.timer = setTimeout(this.next, this.retryMs).unref();
        return;
      }
      // The output is gone (EPIPE, closed): the lines of this write are lost, and counted.
      this.dropped += this.chunkLines;
      this.chunk = undefined;
      this.failing = true;
    } else if (n < this.chunk!.length) {
      this.chunk = this.chunk!.subarray(n);
      // A partial write: the lines it cut belong to the rest.
    } else {
      this.recycle(this.chunk!);
      this.chunk = undefined;
    }
    if (!err) this.failing = false;
    if (
      this.chunk !== undefined ||
      this.used + this.readyBytes >= this.minWrite ||
      this.waiters.length ||
      (this.dropped > this.reported && !this.failing)
    )
      this.next();
    else if (this.used || this.ready.length || this.gatherer) this.schedule();
    else this.next(); // nothing waiting: resolves flush() callers
  };
}

/**
 * The process's stdout as a LogWriter. A pipe is opened again without blocking (on Linux, through
 * /proc/self/fd/1), so a reader that stops reading makes writes fail with EAGAIN rather than hold a
 * thread of libuv's pool forever; a file or a terminal is written through fd 1 as it is.
 */
export function stdoutWriter(options?: LogWriterOptions): LogWriter {
  let fd = 1;
  try {
    if (process.platform === 'linux' && fstatSync(1).isFIFO())
      fd = openSync('/proc/self/fd/1', constants.O_WRONLY | constants.O_NONBLOCK);
  } catch {
    fd = 1;
  }
  return new LogWriter(fd, options);
}
