import type { Socket } from 'node:net';
import type { FrameSink } from '../contract/reply.js';

/** Room before a chunk's bytes for its size line in chunked transfer coding: up to eight hex digits and CRLF. */
const ROOM = 10;
const HEX = Buffer.from('0123456789abcdef', 'latin1');
const CR = 13;
const LF = 10;
/**
 * The size of a new buffer, at the least (a chunk that needs more grows it): room for a few chat events. A socket that
 * does not take a chunk whole keeps the whole buffer until it has sent it, so a slow client holds this much.
 */
const START = 1024;
/** The largest buffer kept between chunks: a larger one (made for a chunk of many events) is let go once written. */
const KEEP = 16384;
/** The most views kept (chunks of as many lengths): a chunk of another length makes its own. */
const MAX_VIEWS = 64;

/**
 * Where a stream's chunk is made before it is written: one buffer, made once, for the chunk of every event. The
 * stream writers share one (`sharedFrames`): the pacer runs one writer's step after another, each makes its chunk,
 * writes it and is done with it before the next begins, so a thousand paced streams hold no buffer of their own while
 * they wait. A chunk that starts with the very same piece as the last one finds it in place and copies only the rest.
 *
 * A write may keep a reference to the bytes it was given: a socket that cannot take them at once holds them until it
 * can. The buffer is then left to that write (`sent`), and the next chunk is made in a new one: bytes a write still
 * holds are never overwritten.
 */
export class Frames implements FrameSink {
  private buf: Buffer;
  /** Where the chunk's next byte goes; the chunk starts at ROOM. */
  private at = ROOM;
  /** The piece the chunk in `buf` starts with. */
  private first: Buffer | undefined = undefined;
  /** Whether a write may still hold `buf`. */
  private lent = false;
  /**
   * The views of `buf` handed to the socket, by where they end (which gives the size, and so where they start): chunks
   * come in a few lengths, and a view made per chunk would be an object per event.
   */
  private views = new Map<number, Buffer>();

  constructor(private readonly capacity = START) {
    this.buf = Buffer.allocUnsafeSlow(capacity);
  }

  /** How many bytes the chunk has. */
  get length(): number {
    return this.at - ROOM;
  }

  /** Starts a new chunk (in a new buffer when a write may still hold the last one, or it grew past KEEP). */
  clear(): void {
    if (this.lent || this.buf.length > KEEP) {
      this.buf = Buffer.allocUnsafeSlow(this.capacity);
      this.first = undefined;
      this.lent = false;
      this.views = new Map();
    }
    this.at = ROOM;
  }

  /** Adds `bytes` to the chunk. */
  put(bytes: Buffer): void {
    const at = this.at;
    if (at === ROOM) {
      if (bytes === this.first) {
        this.at = at + bytes.length;
        return;
      }
      this.first = bytes;
    }
    const end = at + bytes.length;
    if (end + 2 > this.buf.length) this.grow(end + 2);
    this.buf.set(bytes, at);
    this.at = end;
  }

  /**
   * The chunk in chunked transfer coding's frame (its size in hex, CRLF, the bytes, CRLF), ready for the socket. A view
   * of the buffer: after writing it, tell `sent`.
   */
  framed(): Buffer {
    const { buf, at } = this;
    let size = at - ROOM;
    buf[at] = CR;
    buf[at + 1] = LF;
    let start = ROOM - 2;
    buf[start] = CR;
    buf[start + 1] = LF;
    do {
      buf[--start] = HEX[size & 15]!;
      size = Math.floor(size / 16);
    } while (size > 0);
    let view = this.views.get(at);
    if (view === undefined) {
      view = buf.subarray(start, at + 2);
      if (this.views.size < MAX_VIEWS) this.views.set(at, view);
    }
    return view;
  }

  /**
   * Tells that the framed chunk was written to `socket`: what it did not take at once it holds, and so the buffer.
   * Returns whether it took the chunk whole (it holds nothing).
   */
  sent(socket: Socket): boolean {
    if (socket.writableLength === 0) return true;
    this.lent = true;
    return false;
  }

  /** The chunk's bytes as a buffer of their own (for a write through the response, which may hold them a while). */
  chunk(): Buffer {
    return Buffer.from(this.buf.subarray(ROOM, this.at));
  }

  private grow(need: number): void {
    const next = Buffer.allocUnsafeSlow(Math.max(need, this.buf.length * 2));
    // The first piece stays in place; the buffer left behind may still be held by a write and is not written again.
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
    this.views = new Map();
  }
}

/** The frames every stream writer makes its chunks in, one chunk at a time (see Frames). */
export const sharedFrames = new Frames();
