/**
 * The journal's store in Redis, shared by every instance pointed at the same server: a stream capped near the
 * journal's capacity (XADD MAXLEN ~), each entry saying which instance answered. Redis holds entries, so a record is
 * made into its entry (masked and cut by the journal's `finish`) when it is added. A record that cannot be written
 * (Redis away) is counted in `unrecorded`, never dropped silently.
 */
import type { EntryJson, JournalEntry, RequestRecord } from '../journal/record.js';
import type { Finish, JournalStore, JournalView } from '../journal/store.js';

/** A journal entry as the stream holds it (JSON): the entry, and which instance answered. */
type StoredEntry = EntryJson & { readonly instance: string };

/** What the journal needs of the Redis state's one connection (state/redis.ts). */
interface RedisLink {
  readonly instance: string;
  /** Whether the connection is ready: a record is written only then (no offline queue). */
  ready(): boolean;
  /** Runs Redis work; a lost or refused connection becomes the 503 `state_unavailable`. */
  use<T>(work: () => Promise<T>): Promise<T>;
  /** Appends an entry's JSON to the stream capped at `capacity`; resolves with the count since the last clear. */
  append(capacity: number, json: string): Promise<unknown>;
  /** The newest `count` entries' JSON, newest first, and the count since the last clear. */
  newest(count: number): Promise<{ readonly rows: readonly string[]; readonly total: number }>;
  /** Empties the stream; resolves with how many entries it held (at most `capacity`). */
  clear(capacity: number): Promise<number>;
}

export class RedisJournalStore implements JournalStore {
  /** Records that could not be written (Redis away or failing), since start. */
  unrecorded = 0;

  constructor(
    readonly capacity: number,
    private readonly link: RedisLink,
  ) {}

  add(record: RequestRecord, finish: Finish): void {
    if (this.capacity <= 0) return;
    if (!this.link.ready()) {
      this.unrecorded++;
      return;
    }
    this.addEntry(finish(record));
  }

  addEntry(entry: JournalEntry): void {
    if (this.capacity <= 0) return;
    if (!this.link.ready()) {
      this.unrecorded++;
      return;
    }
    const stored: StoredEntry = { ...(entry as EntryJson), instance: this.link.instance };
    this.link.append(this.capacity, JSON.stringify(stored)).catch(() => {
      this.unrecorded++;
    });
  }

  read(): Promise<JournalView> {
    const { capacity } = this;
    return this.link.use(async () => {
      const { rows, total } = await this.link.newest(Math.max(1, capacity));
      // JSON gives an entry back with its undefined fields absent: what the admin API would write of it anyway.
      const entries = capacity <= 0 ? [] : rows.map((row) => JSON.parse(row) as JournalEntry).reverse();
      return { entries, total, capacity, unrecorded: this.unrecorded };
    });
  }

  clear(): Promise<number> {
    return this.link.use(() => this.link.clear(this.capacity));
  }
}
