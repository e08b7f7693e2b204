/**
 * How many bytes of large request bodies the server holds at once. A body is read only once its
 * declared size fits beside the bodies already held; until then it waits, in arrival order, in the
 * client's socket (TCP pushes back), not in the server's memory. Fifty clients each uploading a
 * 7 MB image then cost the server a few bodies' worth of memory, not fifty.
 *
 * Only bodies of at least `minBytes` take part: a chat request is never held up behind uploads. A
 * body larger than the whole budget is read when it is the only one held, so every body is served.
 */
export class BodyBudget {
  private held = 0;
  private readonly queue: { bytes: number; admit: (release: () => void) => void }[] = [];

  constructor(
    readonly capacity: number,
    /** Bodies from this size up take part (fixtures/limits.json, requests.largeBodyBytes). */
    readonly minBytes: number,
  ) {}

  /** Bytes reserved by bodies being read or answered. */
  get heldBytes(): number {
    return this.held;
  }

  /** Requests waiting for room. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Reserves room for a body of `bytes`: the release function at once when it fits (or the body is too
   * small to count), else a promise of it. Release exactly once, when the request is over.
   */
  reserve(bytes: number): (() => void) | Promise<() => void> {
    if (bytes < this.minBytes) return noop;
    if (!this.queue.length && this.fits(bytes)) return this.take(bytes);
    return new Promise((admit) => this.queue.push({ bytes, admit }));
  }

  private fits(bytes: number): boolean {
    return this.held === 0 || this.held + bytes <= this.capacity;
  }

  private take(bytes: number): () => void {
    this.held += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held -= bytes;
      // First come, first served: a large body is not overtaken for ever by smaller ones.
      while (this.queue.length && this.fits(this.queue[0]!.bytes)) {
        const next = this.queue.shift()!;
        next.admit(this.take(next.bytes));
      }
    };
  }
}

const noop = (): void => {};
