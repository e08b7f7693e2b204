import { fstatSync, openSync, write, constants } from 'node:fs';

/** Options of a LogWriter. */
export interface LogWriterOptions {
  /** Characters waiting to be written past which new lines are dropped (counted). Default 16 MiB. */
  readonly maxPending?: number;
  /** Characters gathered into one write(2) at most. Default 1 MiB. */
  readonly maxWrite?: number;
  /** How long to wait before trying again when the output is full (EAGAIN). Default 50 ms. */
  readonly retryMs?: number;
  /** Characters that make a write go out at once; fewer wait up to `delayMs` for more. Default 64 KiB. */
  readonly minWrite?: number;
  /** How long lines may wait to be gathered into a larger write. Default 20 ms. */
  readonly delayMs?: number;
}

const EMPTY: readonly string[] = [];

/**
 * Log lines written to a file descriptor asynchronously, in batches: every line given in one turn of the
 * event loop goes out in one write(2), off the request path. The lines waiting are bounded: when the
 * output cannot keep up (a pipe nobody reads), a new line past the bound is dropped and counted, and a
 * warning with the count is written as soon as the output takes lines again. Nothing is lost silently.
 */
export class LogWriter {
  /** Lines dropped since the writer was made because the output did not keep up (or failed). */
  dropped = 0;
  private reported = 0;
  private queue: string[] = [];
  private queued = 0;
  private chunk: Buffer | undefined;
  private chunkLines = 0;
  private writing = false;
  private scheduled = false;
  /** The last write failed for good (EPIPE): no warning is written into an output that is gone. */
  private failing = false;
  private waiters: (() => void)[] = [];
  private readonly maxPending: number;
  private readonly maxWrite: number;
  private readonly retryMs: number;
  private readonly minWrite: number;
  private readonly delayMs: number;

  constructor(
    private readonly fd: number,
    options: LogWriterOptions = {},
  ) {
    this.maxPending = options.maxPending ?? 16 * 1024 * 1024;
    this.maxWrite = options.maxWrite ?? 1024 * 1024;
    this.retryMs = options.retryMs ?? 50;
    this.minWrite = options.minWrite ?? 64 * 1024;
    this.delayMs = options.delayMs ?? 20;
  }

  /** Queues one line (ending in a newline); false when it was dropped. */
  write(line: string): boolean {
    const size = line.length;
    if (this.queued + size + (this.chunk?.length ?? 0) > this.maxPending) {
      this.dropped++;
      return false;
    }
    this.queue.push(line);
    this.queued += size;
    if (!this.writing && !this.scheduled) this.schedule();
    return true;
  }

  /**
   * The next write: at once when a large one is ready, else after a short wait for more lines. Each
   * write(2) runs on libuv's pool and costs two thread switches besides the copy, and a server pinned to
   * one core pays them on its own core: a few large writes cost far less than many small ones.
   */
  private schedule(): void {
    this.scheduled = true;
    if (this.queued >= this.minWrite || this.waiters.length) setImmediate(this.next);
    else setTimeout(this.next, this.delayMs).unref();
  }

  /** Calls `done` once every queued line has been written (or dropped). */
  flush(done?: (err?: Error) => void): void {
    if (!done) return;
    if (this.idle()) process.nextTick(done);
    else {
      this.waiters.push(() => done());
      if (!this.writing && !this.scheduled) this.schedule();
    }
  }

  private idle(): boolean {
    return !this.writing && !this.scheduled && this.chunk === undefined && this.queue.length === 0 && (this.failing || this.dropped === this.reported);
  }

  /** Takes up to maxWrite characters of queued lines, after a warning when lines were dropped since the last one. */
  private take(): void {
    let lines: readonly string[] = EMPTY;
    let taken = 0;
    if (this.queued <= this.maxWrite) {
      lines = this.queue;
      taken = this.queued;
      this.queue = [];
    } else {
      let n = 0;
      while (n < this.queue.length && taken < this.maxWrite) taken += this.queue[n++]!.length;
      lines = this.queue.slice(0, n);
      this.queue = this.queue.slice(n);
    }
    this.queued -= taken;
    let text = lines.length === 1 ? lines[0]! : lines.join('');
    let count = lines.length;
    if (this.dropped > this.reported && !this.failing) {
      const dropped = this.dropped - this.reported;
      this.reported = this.dropped;
      text =
        `{"level":"warn","time":"${new Date().toISOString()}","dropped":${dropped},"droppedTotal":${this.dropped},` +
        `"msg":"log lines dropped: the output did not keep up"}\n${text}`;
      count++;
    }
    if (count) {
      this.chunk = Buffer.from(text, 'utf8');
      this.chunkLines = count;
    }
  }

  private readonly next = (): void => {
    this.scheduled = false;
    if (this.writing) return;
    if (this.chunk === undefined) this.take();
    if (this.chunk === undefined) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
      return;
    }
    this.writing = true;
    write(this.fd, this.chunk, 0, this.chunk.length, null, this.written);
  };

  private readonly written = (err: NodeJS.ErrnoException | null, n: number): void => {
    this.writing = false;
    if (err) {
      if (err.code === 'EAGAIN' || err.code === 'EBUSY') {
        // The output is full: try again shortly; new lines queue up to the bound meanwhile.
        this.scheduled = true;
        setTimeout(this.next, this.retryMs).unref();
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
      this.chunk = undefined;
    }
    if (!err) this.failing = false;
    if (this.chunk !== undefined || this.queued >= this.minWrite || this.waiters.length || (this.dropped > this.reported && !this.failing)) this.next();
    else if (this.queue.length) this.schedule();
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
    if (process.platform === 'linux' && fstatSync(1).isFIFO()) fd = openSync('/proc/self/fd/1', constants.O_WRONLY | constants.O_NONBLOCK);
  } catch {
    fd = 1;
  }
  return new LogWriter(fd, options);
}
