// The mock as the gateway's upstream, steered through its admin API (docs/faults.md): fault rules for the runner's
// tokens, the journal of what arrived, and the latency settings that pace its streams. The same calls steer a mock the
// runner started (whoever calls the runner passes the function that starts it: src/cli passes startMockServer) and
// one already running, given by its URL.
import type { ConfigInput } from '../../domain/config.js';
import type { EntryJson } from '../../domain/journal/journal.js';
import type { UpstreamFault } from './cases.js';

/** A mock the runner started: its URL, and how to stop it. */
interface UpstreamMock {
  readonly url: string;
  close(): Promise<void>;
}

/** Starts a mock with a configuration. */
export type StartUpstream = (config: ConfigInput) => Promise<UpstreamMock>;

/** Every admin call is answered at once by a mock; one that is not is a mock that is gone. */
const ADMIN_TIMEOUT_MS = 10_000;

/** An admin call that did not answer as asked: the status and the envelope's message. */
export class AdminError extends Error {
  override name = 'AdminError';
}

/** A fault rule as the admin API takes it. */
interface RuleBody {
  readonly id: string;
  readonly match: { readonly body: Readonly<Record<string, string>> };
  readonly fault: UpstreamFault;
  readonly times?: number;
}

export class Upstream {
  constructor(
    /** The mock's base URL (the admin API is under /__admin). */
    readonly url: string,
    private readonly adminToken?: string,
    private readonly owned?: UpstreamMock,
  ) {}

  /** Whether the runner started this mock (and stops it at the end). */
  get started(): boolean {
    return this.owned !== undefined;
  }

  private async call(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
    const headers: Record<string, string> = {};
    if (this.adminToken) headers.authorization = `Bearer ${this.adminToken}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.url.replace(/\/+$/, '')}/__admin${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
    });
    return { status: res.status, text: await res.text() };
  }

  private async json<T>(method: string, path: string, body?: unknown, ok: readonly number[] = [200]): Promise<T> {
    const { status, text } = await this.call(method, path, body);
    if (!ok.includes(status)) {
      let message = text.slice(0, 300);
      try {
        message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
      } catch {
        // not an envelope: the text as it came
      }
      throw new AdminError(`${method} /__admin${path} answered ${status}: ${message}`);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Throws an AdminError unless the admin API answers (GET /__admin/faults). */
  async check(): Promise<void> {
    await this.json('GET', '/faults');
  }

  addRule(rule: RuleBody): Promise<void> {
    return this.json('POST', '/faults', rule, [201]);
  }

  /** Removes a rule; one already gone is no error. */
  async removeRule(id: string): Promise<void> {
    await this.json('DELETE', `/faults/${encodeURIComponent(id)}`, undefined, [200, 204, 404]);
  }

  /** Every rule, with how many requests it matched and faulted. */
  async rules(): Promise<{ id: string; state: { matched: number; fired: number } }[]> {
    return (await this.json<{ data: { id: string; state: { matched: number; fired: number } }[] }>('GET', '/faults'))
      .data;
  }

  /** The journal, oldest first. */
  async journal(): Promise<EntryJson[]> {
    return (await this.json<{ data: EntryJson[] }>('GET', '/requests')).data;
  }

  /** The body request `id` was answered with, while the mock holds it; undefined once gone. */
  async responseBody(id: string): Promise<Buffer | undefined> {
    const res = await fetch(`${this.url.replace(/\/+$/, '')}/__admin/requests/${encodeURIComponent(id)}/body`, {
      headers: this.adminToken ? { authorization: `Bearer ${this.adminToken}` } : {},
      signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
    });
    if (res.status !== 200) return undefined;
    return Buffer.from(await res.arrayBuffer());
  }

  /** The global latency profile in force (`off` when none). */
  async latencyProfile(): Promise<string> {
    return (await this.json<{ profile: string }>('GET', '/latency')).profile;
  }

  /** Puts a profile of fixed times in force for every model, from the next request on. */
  async pace(name: string, ttftMs: number, interTokenMs: number): Promise<void> {
    await this.json('PUT', '/latency', {
      profiles: { [name]: { ttft: ttftMs, interToken: interTokenMs } },
      profile: name,
    });
  }

  async restoreProfile(profile: string): Promise<void> {
    await this.json('PUT', '/latency', { profile });
  }

  /** Stops the mock if the runner started it. */
  async close(): Promise<void> {
    await this.owned?.close();
  }
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * Watches the upstream's journal for the entries of the runner's tokens. One read of the journal serves every probe
 * waiting at the time (a read is the whole journal), at most every POLL_MS.
 */
export class JournalWatch {
  private last: { at: number; entries: Promise<EntryJson[]> } | undefined;

  constructor(
    private readonly upstream: Upstream,
    private readonly pollMs = 50,
  ) {}

  private read(): Promise<EntryJson[]> {
    const now = performance.now();
    if (!this.last || now - this.last.at >= this.pollMs) this.last = { at: now, entries: this.upstream.journal() };
    return this.last.entries;
  }

  /**
   * The entries whose request body holds `token` (followed by the space that ends it in a marked text), oldest first:
   * as soon as there are `expected` of them (the requests the token's fault rule matched), or else once they have
   * stopped coming (`settleMs` without a new one after the first); at most `maxMs` after the call (none may ever come:
   * the gateway answered itself).
   */
  async entries(token: string, { expected, settleMs = 150, maxMs = 1500 }: EntryWait = {}): Promise<EntryJson[]> {
    const started = performance.now();
    let count = -1;
    let changed = started;
    for (;;) {
      const found = (await this.read()).filter((e) => e.request?.body?.includes(`${token} `));
      const now = performance.now();
      if (found.length !== count) {
        count = found.length;
        changed = now;
      }
      const complete = expected !== undefined ? count >= expected : count > 0 && now - changed >= settleMs;
      if (complete || now - started >= maxMs) return found;
      await sleep(this.pollMs);
    }
  }
}

/** How long JournalWatch.entries waits. */
interface EntryWait {
  readonly expected?: number;
  readonly settleMs?: number;
  readonly maxMs?: number;
}
