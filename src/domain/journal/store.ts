import type { JournalEntry, RequestRecord } from './record.js';

/** What the journal holds, as GET /__admin/requests lists it. */
export interface JournalView {
  readonly entries: JournalEntry[];
  /** Requests recorded since the last clear, including those that have left the journal. */
  readonly total: number;
  readonly capacity: number;
  /** Records this instance could not write to a shared store (counted, never dropped silently); absent in memory. */
  readonly unrecorded?: number;
}

/** Makes a record's entry: masks and cuts it (the journal's Masking). */
export type Finish = (record: RequestRecord) => JournalEntry;

/**
 * Where a journal keeps its last `capacity` requests: in memory (journal/ring.ts), or in Redis shared by every
 * instance (state/redisJournal.ts). A record is added unread and made into its entry by the `finish` the journal
 * passes, when the store chooses: the ring makes it only when it is first read (a server under load records far more
 * requests than anyone reads), Redis at once (it holds entries). The store decides how an unread record is held
 * (columns, an object of plain fields, shared texts); the journal, what an entry shows. A store in memory answers at
 * once, a shared one with a Promise.
 */
export interface JournalStore {
  readonly capacity: number;
  /** Adds a record not read yet, replacing the oldest when full; never throws (a shared store counts what it could not
   * write). */
  add(record: RequestRecord, finish: Finish): void;
  /** Adds an entry made already (someone read it at once), replacing the oldest when full. */
  addEntry(entry: JournalEntry): void;
  /** The entries held, oldest first, and the count of requests added since the last clear; an unread one is made by
   * `finish`, once (the store keeps what it made). */
  read(finish: Finish): JournalView | Promise<JournalView>;
  /** Empties the store; returns how many entries it held. */
  clear(): number | Promise<number>;
}
