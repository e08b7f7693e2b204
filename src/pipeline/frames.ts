import type { Socket } from 'node:net';
import type { FrameSink } from '../contract/reply.js';

/** Room before a chunk's bytes for its size line in chunked transfer coding: up to eight hex digits and CRLF. */
const ROOM = 10;
const HEX = Buffer.from('0123456789abcdef', 'latin1');
const CR = 13;
/** The most views a stream keeps (events of as many lengths): events of more lengths than that make theirs each time. */
const MAX_VIEWS = 64;
const LF = 10;

/**
 * The bytes of the chunk a stream writes next, made in one buffer the stream keeps for its life: a paced stream writes
 * an event every few tens of milliseconds, and a buffer made and copied per event is what its writes would cost over
 * the socket write itself. A stream's own head (the start of every event it writes: its id, time and model) stays in
 * place between chunks: a chunk that starts with the very same piece of bytes finds it there and copies only the rest.
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
   * The views of `buf` handed to the socket, by where they end (which gives the size, and so where they start): a
   * stream's events come in a few lengths, and a view made per event would be an object per event.
   */
  private views = new Map<number, Buffer>();

  constructor(private readonly capacity = 512) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  /** How many bytes the chunk has. */
  get length(): number {
    return this.at - ROOM;
  }

  /** Starts a new chunk (in a new buffer when a write may still hold the last one). */
  clear(): void {
    if (this.lent) {
      this.buf = Buffer.allocUnsafe(Math.max(this.capacity, this.at + 2));
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
    const next = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2));
    // The first piece stays in place; the buffer left behind may still be held by a write and is not written again.
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
    this.views = new Map();
  }
}
