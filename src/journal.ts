import type { RequestRecord } from './middleware/requestContext.js';

/** One journal entry: a finished request, with long client-supplied parts cut to size. */
export type JournalEntry = RequestRecord;

const MAX_PATH = 256;
const MAX_DETAILS = 20;

/**
 * The request journal: a ring buffer of the most recent requests, so memory stays bounded however
 * many requests arrive. Admin calls are not recorded (reading the journal must not change it).
 */
export class Journal {
  private readonly ring: (JournalEntry | undefined)[];
  private next = 0;
  private recorded = 0;

  constructor(readonly capacity: number) {
    this.ring = new Array<JournalEntry | undefined>(Math.max(0, capacity));
  }

  /** Adds a finished request, replacing the oldest entry when the buffer is full. */
  record(r: RequestRecord): void {
    if (this.capacity <= 0 || r.path.startsWith('/__admin')) return;
    this.ring[this.next] = {
      ...r,
      path: r.path.length > MAX_PATH ? `${r.path.slice(0, MAX_PATH)}...` : r.path,
      details: r.details && r.details.length > MAX_DETAILS ? r.details.slice(0, MAX_DETAILS) : r.details,
    };
    this.next = (this.next + 1) % this.capacity;
    this.recorded++;
  }

  /** The entries held, oldest first. */
  entries(): JournalEntry[] {
    const held = Math.min(this.recorded, this.capacity);
    const out: JournalEntry[] = [];
    for (let i = 0; i < held; i++) out.push(this.ring[(this.next - held + i + this.capacity) % this.capacity]!);
    return out;
  }

  /** Requests recorded since the last clear, including those that have left the buffer. */
  get total(): number {
    return this.recorded;
  }

  /** Empties the journal; returns how many entries it held. */
  clear(): number {
    const held = Math.min(this.recorded, this.capacity);
    this.ring.fill(undefined);
    this.next = 0;
    this.recorded = 0;
    return held;
  }
}
