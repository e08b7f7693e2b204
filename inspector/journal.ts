import { useEffect, useState } from 'preact/hooks';
import { api, follow, type Entry } from './api.js';
import { MAX_ENTRIES, entryId } from './model.js';

/** The live feed: not up yet (the page has just loaded), up, or lost and being tried again. */
export type Feed = 'connecting' | 'live' | 'reconnecting';

/** The journal the server wrote into the page (a JSON data block): the first paint lists it, before the feed is up. */
function journalInPage(): Entry[] {
  try {
    const list = JSON.parse(document.getElementById('journal')?.textContent ?? '[]') as unknown;
    return Array.isArray(list) ? (list as Entry[]).slice(-MAX_ENTRIES) : [];
  } catch {
    return [];
  }
}

/**
 * The requests the page lists: those written into the page, then each the live feed brings (and the journal read
 * again after a reconnect), oldest first, at most MAX_ENTRIES; `clear` empties the server's journal and the list.
 */
export function useJournal(onError: (message: string) => void) {
  const [initial] = useState(journalInPage);
  const [entries, setEntries] = useState<Entry[]>(initial);
  const [feed, setFeed] = useState<Feed>('connecting');

  useEffect(() => {
    const seen = new Set<string>(initial.map(entryId));
    const add = (list: Entry[]) =>
      setEntries((prev) => {
        const fresh = list.filter((e) => !seen.has(entryId(e)));
        fresh.forEach((e) => seen.add(entryId(e)));
        if (!fresh.length) return prev;
        const next = [...prev, ...fresh].sort((a, b) => a.time - b.time);
        return next.length > MAX_ENTRIES ? next.slice(next.length - MAX_ENTRIES) : next;
      });
    const read = () =>
      api.requests().then(
        (r) => add(r.data),
        (err: Error) => onError(err.message),
      );
    // The feed first, then the journal: nothing recorded in between is missed, and duplicates are dropped.
    // After a reconnect (the server dropped a slow reader, or restarted) the journal is read again.
    let dropped = false;
    const stop = follow(
      (e) => add([e]),
      (on) => {
        setFeed(on ? 'live' : 'reconnecting');
        if (on && dropped) void read();
        dropped = !on;
      },
    );
    void read();
    return stop;
  }, []);

  const clear = (then: () => void) =>
    api.clearRequests().then(
      () => {
        setEntries([]);
        then();
      },
      (err: Error) => onError(err.message),
    );
  return { entries, feed, clear };
}
