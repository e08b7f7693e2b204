import type { RequestRecord } from './middleware/requestContext.js';
import { secretScrubber } from './secrets.js';

/** One journal entry: a finished request, with long client-supplied parts cut to size and secrets masked. */
export type JournalEntry = RequestRecord;

const MAX_PATH = 256;
const MAX_DETAILS = 20;

// A key sent percent-encoded in the path is still the key: such a path is recorded decoded, and masked.
function scrubPath(path: string, scrub: (text: string) => string): string {
  const masked = scrub(path);
  if (!path.includes('%')) return masked;
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return masked;
  }
  const maskedDecoded = scrub(decoded);
  return maskedDecoded === decoded ? masked : maskedDecoded;
}

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

  /** `secrets` (the configured keys and admin token) are masked wherever a client put them: path, ids, body fields, messages. */
  constructor(readonly capacity: number, secrets: readonly string[] = []) {
    this.ring = new Array<JournalEntry | undefined>(Math.max(0, capacity));
    this.scrub = secretScrubber(secrets, { json: false });
  }

  /** Adds a finished request, replacing the oldest entry when the buffer is full. */
  record(r: RequestRecord): void {
    if (this.capacity <= 0 || r.path.startsWith('/__admin')) return;
    const scrub = this.scrub;
    const opt = (s: string | undefined): string | undefined => (s === undefined ? s : scrub(s));
    // Masked before cutting, so a cut cannot leave part of a key behind.
    const path = scrubPath(r.path, scrub);
    const details = r.details && r.details.length > MAX_DETAILS ? r.details.slice(0, MAX_DETAILS) : r.details;
    this.ring[this.next] = {
      ...r,
      requestId: scrub(r.requestId),
      path: path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}...` : path,
      errorCode: typeof r.errorCode === 'string' ? scrub(r.errorCode) : r.errorCode,
      details: details?.map((d) => scrubValues(d, scrub)),
      fault: opt(r.fault),
      stream: opt(r.stream),
      model: opt(r.model),
      operation: opt(r.operation),
      keyLabel: opt(r.keyLabel),
    };
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
