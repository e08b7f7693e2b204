import type { Entry } from './api.js';

/** One attempt chain: a request and the retries the SDK sent after it (x-stainless-retry-count). */
export interface Chain {
  readonly id: string;
  readonly attempts: Entry[];
}

export const entryId = (e: Entry): string => `${e.requestId}@${e.time}`;

const sameCall = (a: Entry, b: Entry): boolean =>
  a.operation === b.operation &&
  a.keyLabel === b.keyLabel &&
  a.method === b.method &&
  a.path === b.path &&
  (!a.bodyHash || !b.bodyHash || a.bodyHash === b.bodyHash);

/**
 * Groups entries (oldest first) into attempt chains: an entry with retry count n > 0 joins the latest
 * chain of the same call whose last attempt had count n - 1; anything else starts a chain.
 */
export function chainsOf(entries: readonly Entry[]): Chain[] {
  const chains: Chain[] = [];
  for (const e of entries) {
    const n = e.retryCount ?? 0;
    let joined = false;
    if (n > 0) {
      for (let i = chains.length - 1; i >= 0 && i >= chains.length - 50; i--) {
        const last = chains[i]!.attempts[chains[i]!.attempts.length - 1]!;
        if ((last.retryCount ?? 0) === n - 1 && sameCall(last, e)) {
          chains[i]!.attempts.push(e);
          joined = true;
          break;
        }
      }
    }
    if (!joined) chains.push({ id: entryId(e), attempts: [e] });
  }
  return chains;
}

export interface Filters {
  operation: string;
  status: string;
  key: string;
  fault: string;
  /** Words searched for in the request id, model, key label, path and request body, in any case. */
  text: string;
}
export const NO_FILTERS: Filters = { operation: '', status: '', key: '', fault: '', text: '' };

/**
 * Whether an entry holds every word of a search: in its request id (the client's x-request-id, when it
 * sent a safe one), model, key label, path or request body (as the journal keeps it: masked, its first
 * records.maxBodyChars). So a person finds the one request their test sent among hundreds, by its id or
 * by a word of its prompt.
 */
export function textMatches(e: Entry, text: string): boolean {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const haystack = [e.requestId, e.model, e.keyLabel, e.path, e.request?.body].filter(Boolean).join('\n').toLowerCase();
  return words.every((w) => haystack.includes(w));
}

/** The status class a filter names: `2xx`, `4xx`, `5xx`, `0` (no response), or one exact status. */
export function statusMatches(status: number, wanted: string): boolean {
  if (!wanted) return true;
  if (/^\dxx$/.test(wanted)) return Math.floor(status / 100) === Number(wanted[0]);
  return String(status) === wanted;
}

/** Whether any attempt of a chain passes every filter. */
export function chainMatches(chain: Chain, f: Filters): boolean {
  return chain.attempts.some(
    (e) =>
      (!f.operation || e.operation === f.operation) &&
      statusMatches(e.status, f.status) &&
      (!f.key || e.keyLabel === f.key) &&
      (!f.fault ||
        (f.fault === 'any' ? Boolean(e.fault) : f.fault === 'none' ? !e.fault : (e.fault ?? '').includes(f.fault))) &&
      textMatches(e, f.text),
  );
}

/** The distinct values of one field, sorted, for a filter's choices. */
export function valuesOf(entries: readonly Entry[], pick: (e: Entry) => string | undefined): string[] {
  return [...new Set(entries.map(pick).filter((v): v is string => Boolean(v)))].sort();
}

/** A status's tone for colour: ok, client error, server error, no response. */
export function tone(status: number): 'ok' | 'warn' | 'err' | 'none' {
  if (status === 0) return 'none';
  if (status < 400) return 'ok';
  if (status < 500) return 'warn';
  return 'err';
}

/** `messages[0].content` → ['messages', 0, 'content']: a validation param as a path into the body. */
export function paramPath(param: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const part of param.split('.')) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    if (m[1]) out.push(m[1]);
    for (const idx of m[2]!.matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

export const pathKey = (path: readonly (string | number)[]): string => JSON.stringify(path);

/** The newest entries kept in the page: older ones are dropped, as the journal drops them. */
export const MAX_ENTRIES = 2000;
