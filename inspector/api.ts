// The inspector's only way to the server: the documented admin API, so the page can do nothing a
// script could not. Every call is same-origin; no credential is read or kept by the page (with an admin
// token, the browser sends the HttpOnly session cookie by itself, to fetch, EventSource and media alike).
import type { EntryJson } from '../src/domain/journal/record.js';
import type { LatencyView } from '../src/domain/latency/types.js';

/**
 * A journal entry as GET /__admin/requests and the events feed give it (docs/faults.md): the JSON of the
 * server's own entry type, derived from its one definition of the request record (a type only: nothing of
 * src/ is bundled into the page). Of a detail the page reads the field, code and message the mock's errors
 * give; any of them may be missing from one that came from elsewhere.
 */
export type Entry = Omit<EntryJson, 'details'> & { readonly details?: readonly ErrorDetail[] };
/** One entry of an error's `details`, as the page reads it. */
export interface ErrorDetail {
  readonly param?: string | null;
  readonly code?: string | null;
  readonly message?: string;
}

/** Where the server serves the body a request was answered with (binary, or text longer than the journal keeps). */
export const bodyUrl = (requestId: string): string => `/__admin/requests/${encodeURIComponent(requestId)}/body`;

export interface Rule {
  id: string;
  description?: string;
  match?: Record<string, unknown>;
  fault: Record<string, unknown>;
  times?: number;
  probability?: number;
  seed?: number;
  state?: { matched: number; fired: number; remaining: number | null };
}

export interface LimitView {
  limit: number;
  remaining: number;
  resetMs: number;
}
export interface KeyLimits {
  key: string;
  name: string | null;
  requests: LimitView;
  tokens: LimitView | null;
}

/** An admin API answer that was not a success: its status and the envelope's message. */
export class AdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    // x-uam-admin: the server's CSRF check for a change made through the session cookie (a cross-site
    // form cannot send it; docs/inspector.md#access-and-security).
    headers: body === undefined ? { 'x-uam-admin': '1' } : { 'content-type': 'application/json', 'x-uam-admin': '1' },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const message =
      (json as { error?: { message?: string } } | undefined)?.error?.message ?? `${res.status} ${res.statusText}`;
    throw new AdminError(res.status, message);
  }
  return json as T;
}

export const api = {
  requests: () => call<{ data: Entry[]; total: number; capacity: number }>('GET', '/__admin/requests'),
  clearRequests: () => call<{ deleted: number }>('DELETE', '/__admin/requests'),
  rules: () => call<{ data: Rule[] }>('GET', '/__admin/faults'),
  addRule: (rule: unknown) => call<Rule>('POST', '/__admin/faults', rule),
  deleteRule: (id: string) => call<{ id: string }>('DELETE', `/__admin/faults/${encodeURIComponent(id)}`),
  limits: () => call<{ data: KeyLimits[] }>('GET', '/__admin/rate-limits'),
  reset: () => call<unknown>('POST', '/__admin/reset'),
  latency: () => call<LatencyView>('GET', '/__admin/latency'),
  setLatency: (change: unknown) => call<LatencyView>('PUT', '/__admin/latency', change),
  resetLatency: () => call<LatencyView>('DELETE', '/__admin/latency'),
};

/** The whole text of a long response body, from the server's store; undefined once it has gone. */
export async function fullBody(requestId: string): Promise<string | undefined> {
  const res = await fetch(bodyUrl(requestId), { credentials: 'same-origin', cache: 'no-store' });
  return res.ok ? res.text() : undefined;
}

/** The live feed: each new entry, while the page is open; EventSource reconnects by itself. */
export function follow(onEntry: (e: Entry) => void, onState: (live: boolean) => void): () => void {
  const source = new EventSource('/__admin/requests/events');
  source.addEventListener('ready', () => onState(true));
  source.addEventListener('entry', (ev) => {
    try {
      onEntry(JSON.parse((ev as MessageEvent<string>).data) as Entry);
    } catch {
      // an event that is not JSON is ignored
    }
  });
  source.addEventListener('error', () => onState(false));
  return () => source.close();
}
