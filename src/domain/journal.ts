import { findOperation } from '../contract/operations.js';
import { loadLimits } from './limits.js';
import { scrubPath, secretScrubber } from './secrets.js';

/** What is known about one finished request; observers (journal, log) receive it. */
export interface RequestRecord {
  readonly requestId: string;
  readonly time: number;
  readonly method: string;
  readonly path: string;
  readonly operation: string | undefined;
  readonly keyLabel: string | undefined;
  readonly status: number;
  readonly latencyMs: number;
  readonly errorCode: string | null | undefined;
  readonly details: readonly unknown[] | undefined;
  readonly fault: string | undefined;
  readonly stream: string | undefined;
  readonly retryCount: number | undefined;
  readonly model: string | undefined;
  /** What the validating proxy found wrong with the request or the upstream's answer (absent when nothing). */
  readonly violations?: readonly Violation[];
}

/** One departure from the API seen by the validating proxy: the rule (`response.status`, `request.schema`, ...), what it wants, what came. */
export interface Violation {
  readonly rule: string;
  readonly expected: string;
  readonly actual: string;
}

/** One journal entry: a finished request, with long client-supplied parts cut to size and secrets masked. */
export type JournalEntry = RequestRecord;

const MAX_PATH = loadLimits().records.maxPathChars;
const MAX_DETAILS = 20;
// How many secret-free texts are remembered, so a client sending ever new paths cannot grow it.
const MAX_CLEAN = 1024;

// Every string of a detail (message, param, code, ...): details quote what the client sent.
function scrubValues(value: unknown, scrub: (text: string) => string): unknown {
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) return value.map((v) => scrubValues(v, scrub));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubValues(v, scrub)]));
}

/**
 * The request journal: a ring buffer of the most recent requests, so memory stays bounded however
 * many requests arrive. Admin calls are not recorded (reading the journal must not change it).
 */
export class Journal {
  private readonly ring: (JournalEntry | undefined)[];
  private next = 0;
  private recorded = 0;
  private readonly scrub: (text: string) => string;
  private readonly scrubPath: (path: string) => string;
  private readonly clean = new Set<string>();
  private readonly maskText = (text: string): string => this.masked(text);

  /** `secrets` (the configured keys and admin token) are masked wherever a client put them: path, ids, body fields, messages. */
  constructor(
    readonly capacity: number,
    secrets: readonly string[] = [],
  ) {
    this.ring = new Array<JournalEntry | undefined>(Math.max(0, capacity));
    this.scrub = secretScrubber(secrets, { json: false });
    this.scrubPath = (path) => scrubPath(path, this.scrub);
  }

  /**
   * `text` masked; texts already found to hold no secret are remembered (never one that held a secret),
   * since the same few paths, operations and models come back request after request.
   */
  private masked(text: string, mask: (text: string) => string = this.scrub): string {
    if (this.clean.has(text)) return text;
    const out = mask(text);
    if (out === text && text.length <= MAX_PATH && this.clean.size < MAX_CLEAN) this.clean.add(text);
    return out;
  }

  /**
   * Adds a finished request, replacing the oldest entry when the buffer is full. Admin calls and health
   * checks are left out: a container probe every few seconds would crowd out the client's requests.
   */
  record(r: RequestRecord): void {
    if (this.capacity <= 0 || r.path.startsWith('/__admin') || findOperation(r.operation)?.probe) return;
    const opt = (s: string | undefined): string | undefined => (s === undefined ? s : this.masked(s));
    // Masked before cutting, so a cut cannot leave part of a key behind.
    const masked = this.masked(r.path, this.scrubPath);
    const path = masked.length > MAX_PATH ? `${masked.slice(0, MAX_PATH)}...` : masked;
    const requestId = this.scrub(r.requestId);
    const errorCode = typeof r.errorCode === 'string' ? this.masked(r.errorCode) : r.errorCode;
    const fault = opt(r.fault);
    const stream = opt(r.stream);
    const model = opt(r.model);
    const operation = opt(r.operation);
    const keyLabel = opt(r.keyLabel);
    const same =
      path === r.path &&
      requestId === r.requestId &&
      errorCode === r.errorCode &&
      fault === r.fault &&
      stream === r.stream &&
      model === r.model &&
      operation === r.operation &&
      keyLabel === r.keyLabel;
    // A record with nothing to mask or cut (the usual case) is kept as it is: records are never changed.
    this.ring[this.next] =
      same && !r.details
        ? r
        : { ...r, requestId, path, errorCode, fault, stream, model, operation, keyLabel, details: r.details?.slice(0, MAX_DETAILS).map((d) => scrubValues(d, this.maskText)) };
    this.next = (this.next + 1) % this.capacity;
    this.recorded++;
  }

  /** The entries held, oldest first. */
  entries(): JournalEntry[] {
    const held = Math.min(this.recorded, this.capacity);
    const out: JournalEntry[] = [];
    for (let i = 0; i < held; i++) out.push(this.ring[(this.next - held + i + this.capacity) % this.capacity]!);
    return out;
  }

  /** Requests recorded since the last clear, including those that have left the buffer. */
  get total(): number {
    return this.recorded;
  }

  /** Empties the journal; returns how many entries it held. */
  clear(): number {
    const held = Math.min(this.recorded, this.capacity);
    this.ring.fill(undefined);
    this.next = 0;
    this.recorded = 0;
    return held;
  }
}
