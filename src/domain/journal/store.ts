import type { JournalEntry, RequestRecord } from './record.js';

/**
 * Where a journal keeps its last `capacity` requests (journal/ring.ts holds them in memory). A record is
 * added unread and made into its entry only when it is first read, by the `finish` its reader passes: a
 * server under load records far more requests than anyone reads. The store decides how an unread record
 * is held (columns, an object of plain fields, shared texts); the journal, what an entry shows.
 */
export interface JournalStore {
  readonly capacity: number;
  /** Requests added since the last clear, including those that have left the store. */
  readonly total: number;
  /** Adds a record not read yet, replacing the oldest when full. */
  add(record: RequestRecord): void;
  /** Adds an entry made already (someone read it at once), replacing the oldest when full. */
  addEntry(entry: JournalEntry): void;
  /** The entries held, oldest first; an unread one is made by `finish`, once (the store keeps what it made). */
  entries(finish: (record: RequestRecord) => JournalEntry): JournalEntry[];
  /** Empties the store; returns how many entries it held. */
  clear(): number;
}
