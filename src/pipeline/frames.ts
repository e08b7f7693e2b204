import type { Socket } from 'node:net';
import type { FrameSink } from '../contract/reply.js';

/** Room before a chunk's bytes for its size line in chunked transfer coding: up to eight hex digits and CRLF. */
const ROOM = 10;
const HEX = Buffer.from('0123456789abcdef', 'latin1');
const CR = 13;
const LF = 10;
/** Room a buffer grown has past the chunk it is made for: a stream's events differ in length by a few tokens' text. */
const SLACK = 64;
/**
 * The largest buffer a stream keeps between chunks: room for a chat event or two. A larger chunk (a stream far behind
 * its schedule, or unpaced, writes several events at once) is made in a buffer of Node's pool, let go once written.
 */
const KEEP = 1024;
const EMPTY = Buffer.alloc(0);

/**
 * The bytes of the chunk a stream writes next, made in one buffer the stream keeps for its life: a paced stream writes
 * an event every few tens of milliseconds, and a buffer made and copied per event is what its writes would cost over
 * the socket write itself. A stream's own head (the start of every event it writes: its id, time and model) stays in
 * place between chunks: a chunk that starts with the very same piece finds it there and copies only the rest.
 *
 * The buffer is made to twice the size of the chunk's first piece and, kept, is a memory block of its own, not a slice of
 * Node's shared 8 KiB pool: a stream holds it for seconds, and a slice would keep its whole slab alive. A chunk of
 * several events is made in a buffer the stream does not keep (KEEP).
 *
 * A write may keep a reference to the bytes it was given: a socket that cannot take them at once holds them until it
 * can. The buffer is then left to that write (`sent`), and the next chunk is made in a new one: bytes a write still
 * holds are never overwritten.
 */
export class Frames implements FrameSink {
  private buf = EMPTY;
  /** Where the chunk's next byte goes; the chunk starts at ROOM. */
  private at = ROOM;
  /** The piece the chunk in `buf` starts with. */
  private first: Buffer | string | undefined = undefined;
  /** The byte length of `first` when it is a text. */
  private firstBytes = 0;
  /** Whether a write may still hold `buf`. */
  private lent = false;
  /**
   * The last view of `buf` handed to the socket, and where its chunk ended (which gives its size, and so where it
   * starts): the next chunk of the same length goes out in the same view rather than in an object of its own.
   */
  private view: Buffer | undefined = undefined;
  private viewAt = 0;

  /** `capacity`: the least size of a buffer made (else twice the chunk's first piece). */
  constructor(private readonly capacity = 0) {}

  /** How many bytes the chunk has. */
  get length(): number {
    return this.at - ROOM;
  }

  /** Starts a new chunk (in a new buffer when a write may still hold the last one, or it is larger than a stream keeps). */
  clear(): void {
    if (this.lent || this.buf.length > KEEP) {
      this.buf = EMPTY;
      this.first = undefined;
      this.lent = false;
      this.view = undefined;
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

  /** Adds `text` as UTF-8 to the chunk; the same text that started the last chunk is still in place. */
  putText(text: string): void {
    const at = this.at;
    if (at === ROOM && text === this.first) {
      this.at = at + this.firstBytes;
      return;
    }
    const bytes = Buffer.byteLength(text);
    const end = at + bytes;
    if (end + 2 > this.buf.length) this.grow(end + 2);
    this.buf.write(text, at, bytes, 'utf8');
    if (at === ROOM) {
      this.first = text;
      this.firstBytes = bytes;
    }
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
    if (this.viewAt !== at || this.view === undefined) {
      this.view = buf.subarray(start, at + 2);
      this.viewAt = at;
    }
    return this.view;
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
    // A new buffer is made with the chunk's first piece (a stream's head): twice that leaves room for the rest.
    const size = Math.max(this.buf.length === 0 ? need * 2 : need + SLACK, this.capacity, this.buf.length * 2);
    const next = size > KEEP ? Buffer.allocUnsafe(size) : Buffer.allocUnsafeSlow(size);
    // The first piece stays in place; the buffer left behind may still be held by a write and is not written again.
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
    this.view = undefined;
  }
}
