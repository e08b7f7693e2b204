/**
 * The journal's store in memory: a ring buffer of the most recent requests, so memory stays bounded however
 * many arrive. An unread record of the common kind goes into columns (journal/columns.ts), another into an
 * object of plain fields (journal/unread.ts); an entry once made replaces either.
 */
import { Columns } from './columns.js';
import type { JournalEntry, RequestRecord } from './record.js';
import type { Finish, JournalStore, JournalView } from './store.js';
import { SharedTexts } from './texts.js';
import { Unread } from './unread.js';

type Slot = JournalEntry | Unread;

export class RingStore implements JournalStore {
  private readonly ring: (Slot | undefined)[];
  private next = 0;
  private recorded = 0;
  private readonly texts = new SharedTexts();
  /** The unread entries of the common kind; a slot they hold is empty in `ring`. */
  private readonly columns: Columns;

  constructor(readonly capacity: number) {
    this.ring = new Array<Slot | undefined>(Math.max(0, capacity));
    this.columns = new Columns(Math.max(0, capacity));
  }

  get total(): number {
    return this.recorded;
  }

  /** The slot the next request takes (the oldest, once the ring is full). */
  private take(): number {
    const i = this.next;
    this.next = (i + 1) % this.capacity;
    this.recorded++;
    return i;
  }

  add(r: RequestRecord): void {
    const i = this.take();
    if (this.columns.put(i, r, this.texts)) {
      this.ring[i] = undefined;
      return;
    }
    if (this.columns.holds(i)) this.columns.release(i);
    this.ring[i] = new Unread(r, this.texts);
  }

  addEntry(entry: JournalEntry): void {
    const i = this.take();
    if (this.columns.holds(i)) this.columns.release(i);
    this.ring[i] = entry;
  }

  /** The entry in a slot of the ring, made (once) when it is first read. */
  private entryAt(i: number, finish: Finish): JournalEntry {
    if (this.columns.holds(i)) {
      const entry = finish(this.columns.record(i));
      this.columns.release(i);
      this.ring[i] = entry;
      return entry;
    }
    const slot = this.ring[i]!;
    if (!(slot instanceof Unread)) return slot;
    const entry = finish(slot.record());
    this.ring[i] = entry;
    return entry;
  }

  read(finish: Finish): JournalView {
    return { entries: this.entries(finish), total: this.recorded, capacity: this.capacity };
  }

  /** The entries held, oldest first. */
  entries(finish: Finish): JournalEntry[] {
    const held = Math.min(this.recorded, this.capacity);
    const out: JournalEntry[] = [];
    for (let i = 0; i < held; i++)
      out.push(this.entryAt((this.next - held + i + this.capacity) % this.capacity, finish));
    return out;
  }

  clear(): number {
    const held = Math.min(this.recorded, this.capacity);
    this.ring.fill(undefined);
    this.columns.clear();
    this.next = 0;
    this.recorded = 0;
    return held;
  }
}
