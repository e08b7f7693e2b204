/**
 * The request journal. What a record holds is defined once, in journal/record.ts (the one place to edit
 * to record a new field); what an entry shows of it, in journal/entry.ts; how the last requests are held,
 * behind the JournalStore interface (journal/store.ts), in journal/ring.ts.
 */
import { isRecipe } from '../contract/reply.js';
import { Masking, journalled, toEntry, type RecordBounds } from './journal/entry.js';
import type { JournalEntry, RequestRecord } from './journal/record.js';
import { RingStore } from './journal/ring.js';
import type { JournalStore } from './journal/store.js';

export { headersFromBlock, Masking, toEntry, journalled, type RecordBounds } from './journal/entry.js';
export type {
  EntryJson,
  EntryRequest,
  JournalEntry,
  RequestDetail,
  RequestRecord,
  SentEvent,
  SentEvents,
  Violation,
} from './journal/record.js';
export type { JournalStore } from './journal/store.js';

// How many inspector pages may watch the journal at once: a guard on the server's work per request (each
// listener makes the entry at once), not a bound of what the journal keeps, so it stays here.
export const MAX_LISTENERS = 16;

/** A listener of new journal entries (the inspector's live feed). */
export type JournalListener = (entry: JournalEntry) => void;

/**
 * The request journal: the most recent requests, so memory stays bounded however many requests arrive.
 * Admin calls are not recorded (reading the journal must not change it).
 */
export class Journal {
  private readonly masking: Masking;
  private readonly store: JournalStore;
  private readonly finish = (r: RequestRecord): JournalEntry => toEntry(r, this.masking);
  private readonly listeners = new Set<JournalListener>();

  /**
   * `secrets` (the configured keys and admin token) are masked wherever a client put them: path, ids, body
   * fields, messages. `store` holds the last `capacity` requests (a ring in memory unless another is given).
   * `bounds` are the records bounds of the server's checked limits (services.limits.records).
   */
  constructor(
    readonly capacity: number,
    secrets: readonly string[] = [],
    store: JournalStore = new RingStore(capacity),
    bounds?: RecordBounds,
  ) {
    this.masking = new Masking(secrets, bounds);
    this.store = store;
  }

  /**
   * Adds a finished request, replacing the oldest entry when the buffer is full. Admin calls and health
   * checks are left out: a container probe every few seconds would crowd out the client's requests.
   *
   * Masking and cutting wait until the entry is read (entries(), a listener): a server under load
   * records far more requests than anyone reads, and most leave the ring unread. What is held meanwhile
   * is the record as it came, bounded: a body longer than the journal keeps is masked, cut and hashed at
   * once, so no request body is held whole.
   */
  record(r: RequestRecord): void {
    if (this.capacity <= 0 || !journalled(r)) return;
    const body = r.request?.body;
    const sent = r.responseBody;
    const { maxBodyChars, maxResponseBodyChars } = this.masking.bounds;
    const now =
      this.listeners.size > 0 ||
      (body !== undefined && body.length > maxBodyChars) ||
      (sent !== undefined && !isRecipe(sent) && (typeof sent !== 'string' || sent.length > maxResponseBodyChars));
    if (!now) {
      this.store.add(r);
      return;
    }
    const entry = toEntry(r, this.masking);
    this.store.addEntry(entry);
    if (!this.listeners.size) return;
    for (const listener of this.listeners) {
      try {
        listener(entry);
      } catch {
        this.listeners.delete(listener); // a broken listener must not stop the journal
      }
    }
  }

  /**
   * Calls `listener` with each new entry until the returned function is called; undefined when
   * MAX_LISTENERS are watching already. Listeners run inside record(): they must only queue the entry.
   */
  subscribe(listener: JournalListener): (() => void) | undefined {
    if (this.listeners.size >= MAX_LISTENERS) return undefined;
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
  /** True while someone follows the journal (with shared state, only then does this instance's journal record). */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  /** The entries held, oldest first. */
  entries(): JournalEntry[] {
    return this.store.entries(this.finish);
  }

  /** Requests recorded since the last clear, including those that have left the buffer. */
  get total(): number {
    return this.store.total;
  }

  /** Empties the journal; returns how many entries it held. */
  clear(): number {
    return this.store.clear();
  }
}
