/**
 * The request journal, one per process. What a record holds is defined once, in journal/record.ts (the one place to
 * edit to record a new field); what an entry shows of it, in journal/entry.ts; how the last requests are held, behind
 * the JournalStore interface (journal/store.ts): in memory (journal/ring.ts), or in Redis shared by every instance
 * (state/redisJournal.ts).
 */
import { isRecipe } from '../../contract/reply.js';
import { Masking, journalled, toEntry, type RecordBounds } from './entry.js';
import type { JournalEntry, RequestRecord } from './record.js';
import { RingStore } from './ring.js';
import type { Finish, JournalStore, JournalView } from './store.js';

export { headersFromBlock, Masking, toEntry, journalled, type RecordBounds } from './entry.js';
export type {
  EntryJson,
  EntryRequest,
  JournalEntry,
  RequestDetail,
  RequestRecord,
  SentEvent,
  SentEvents,
  Violation,
} from './record.js';
export type { Finish, JournalStore, JournalView } from './store.js';

/** A listener of new journal entries (the inspector's live feed). */
type JournalListener = (entry: JournalEntry) => void;

/** A value of type T, or a Promise of it where the store's reading `R` is one (each kind of store in turn). */
type Like<R, T> = R extends Promise<unknown> ? Promise<T> : T;
type ReadOf<S extends JournalStore> = ReturnType<S['read']>;

/**
 * The request journal: the most recent requests, so memory stays bounded however many requests arrive.
 * Admin calls are not recorded (reading the journal must not change it). Its readings answer at once from a store in
 * memory (the default), with a Promise from a shared one.
 */
export class Journal<S extends JournalStore = RingStore> {
  private readonly masking: Masking;
  private readonly store: S;
  private readonly finish: Finish = (r) => toEntry(r, this.masking);
  private readonly listeners = new Set<JournalListener>();

  /**
   * `bounds` are the records bounds of the server's checked limits (services.limits.records). `secrets` (the
   * configured keys and admin token) are masked wherever a client put them: path, ids, body fields, messages.
   * `store` holds the last `capacity` requests (a ring in memory unless another is given).
   */
  constructor(
    readonly capacity: number,
    bounds: RecordBounds,
    secrets: readonly string[] = [],
    store?: S,
  ) {
    this.masking = new Masking(bounds, secrets);
    this.store = store ?? (new RingStore(capacity) as JournalStore as S);
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
      this.store.add(r, this.finish);
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
   * Calls `listener` with each new entry until the returned function is called; undefined when `max` are watching
   * already (feeds.maxFollowers: each listener makes every entry at once). Listeners run inside record(): they must
   * only queue the entry.
   */
  subscribe(listener: JournalListener, max: number): (() => void) | undefined {
    if (this.listeners.size >= max) return undefined;
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
  /** True while someone follows the journal (the inspector's live feed). */
  get listening(): boolean {
    return this.listeners.size > 0;
  }

  /**
   * The entries held, oldest first, and how many requests were recorded since the last clear (GET /__admin/requests).
   */
  view(): ReadOf<S> {
    return this.store.read(this.finish) as ReadOf<S>;
  }

  /** The entries held, oldest first. */
  entries(): Like<ReadOf<S>, JournalEntry[]> {
    const view = this.view() as JournalView | Promise<JournalView>;
    return (view instanceof Promise ? view.then((v) => v.entries) : view.entries) as Like<ReadOf<S>, JournalEntry[]>;
  }

  /** Requests recorded since the last clear, including those that have left the store. */
  get total(): Like<ReadOf<S>, number> {
    const view = this.view() as JournalView | Promise<JournalView>;
    return (view instanceof Promise ? view.then((v) => v.total) : view.total) as Like<ReadOf<S>, number>;
  }

  /** Empties the journal; returns how many entries it held. */
  clear(): ReturnType<S['clear']> {
    return this.store.clear() as ReturnType<S['clear']>;
  }
}
