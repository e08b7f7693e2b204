import { breaks, endingOf, type FaultSpec } from '../domain/faults/kinds.js';
import { BROKEN_EVENT } from '../pipeline/sse.js';
import { parseSse } from '../verdict/sse.js';

const frame = (data: string): string => `data: ${data}\n\n`;

/**
 * A stream fault (stream-cut, stall, malformed) applied to a stream the proxy relays, as the mock applies
 * it to its own streams (alterReply, writeSse). The upstream's blocks go out whole, one at a time, until
 * `stopAfter` events have gone: then the stream is over, with no [DONE], and the caller cuts it or holds
 * it silent (`ending`). With `malformed`, the second event goes out broken (the first, when it is the
 * only one) and [DONE] follows. A block with no event (a comment, a keep-alive) goes out as it is.
 */
export class RelayedStreamFault {
  /** How the stream ends once over: cut, or held silent; undefined when it runs to its end (malformed only). */
  readonly ending: 'cut' | 'stall' | undefined;
  /** True once the fault has ended the stream: nothing more goes out. */
  over: boolean;
  private readonly stopAfter: number;
  private readonly malformed: boolean;
  private sent = 0;
  /** The first event, held until it is known whether it is the only one (malformed). */
  private held: string | undefined;

  private constructor(ending: ReturnType<typeof endingOf>, malformed: boolean) {
    this.ending = ending?.how;
    this.stopAfter = ending?.after ?? Number.POSITIVE_INFINITY;
    this.malformed = malformed;
    this.over = this.stopAfter === 0;
  }

  /** The fault's work on a relayed stream, or undefined when the fault leaves streams alone. */
  static of(spec: FaultSpec | undefined): RelayedStreamFault | undefined {
    if (!spec) return undefined;
    const ending = endingOf(spec);
    const malformed = breaks(spec);
    return ending || malformed ? new RelayedStreamFault(ending, malformed) : undefined;
  }

  /** What goes out for one complete block of the upstream's stream (its text, ending in a blank line). */
  take(block: string): string {
    if (this.over) return '';
    const data = parseSse(block).events[0]?.data;
    if (data === undefined) return block;
    if (data === '[DONE]') {
      if (this.ending) {
        // The upstream ended before the fault's count: the stream still ends as the fault says.
        this.over = true;
        return this.release(true);
      }
      return this.release(true) + block;
    }
    this.sent++;
    let out = block;
    if (this.malformed && this.sent === 1) {
      this.held = block;
      out = '';
    } else if (this.malformed && this.sent === 2) {
      out = this.release(false) + frame(BROKEN_EVENT);
    }
    if (this.sent >= this.stopAfter) {
      // Ended by the count, the first event held goes out as it came: the second was never going out.
      this.over = true;
      out += this.release(false);
    }
    return out;
  }

  /** What is still held when the upstream's stream ends with no [DONE]: its only event, broken. */
  end(): string {
    return this.release(true);
  }

  /** The held first event: broken when it turned out to be the only one (or as it came), then no longer held. */
  private release(broken: boolean): string {
    const held = this.held;
    this.held = undefined;
    return held === undefined ? '' : broken ? frame(BROKEN_EVENT) : held;
  }
}
