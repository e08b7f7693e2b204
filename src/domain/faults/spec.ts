/**
 * One fault, in the form both the X-Mock-Fault header and config rules reduce to. The config form
 * uses these field names; the header form uses the names in HEADER_NAMES.
 */
export interface FaultSpec {
  /** Answer this status (400-599) with an error envelope. */
  status?: number;
  /** Seconds to advertise in retry-after / retry-after-ms (429 defaults to 1). */
  retryAfter?: number;
  /** Wait this long before the first byte. */
  delayMs?: number;
  /** Drop the connection with a TCP reset, sending nothing. */
  reset?: true;
  /** Close the connection cleanly, sending nothing. */
  empty?: true;
  /** Send a 200 whose JSON body (or one SSE event) is broken. */
  malformed?: true;
  /** End the body after this many SSE events (or bytes), with no [DONE]. */
  streamCut?: number;
  /** Send this many SSE events (or bytes), then nothing until the client gives up. */
  stall?: number;
  /** Add `x-should-retry: false`, which makes the official SDKs give up at once. */
  noRetry?: true;
}

/** The header-form name of each field, in the order descriptions list them. */
const HEADER_NAMES: Readonly<Record<keyof FaultSpec, string>> = {
  status: 'status',
  retryAfter: 'retry-after',
  delayMs: 'delay',
  reset: 'reset',
  empty: 'empty',
  malformed: 'malformed',
  streamCut: 'stream-cut',
  stall: 'stall',
  noRetry: 'no-retry',
};

/** A fault in header form, e.g. `status=503;retry-after=2`: used in the journal and the admin API. */
export function describeFault(spec: FaultSpec): string {
  const parts: string[] = [];
  for (const [field, name] of Object.entries(HEADER_NAMES) as [keyof FaultSpec, string][]) {
    const value = spec[field];
    if (value === undefined) continue;
    parts.push(value === true ? name : `${name}=${value}`);
  }
  return parts.join(';');
}

/** Limits that depend on the server's configuration. */
export interface FaultLimits {
  /** Longest accepted delay (the server's stall maximum). */
  readonly maxDelayMs: number;
}

/**
 * What is wrong with a combination of fault fields, in header-form words; undefined when it is sound.
 * A fault that sends nothing cannot also choose a status; one status cannot also be a broken 200.
 */
export function faultProblem(spec: FaultSpec, limits: FaultLimits): string | undefined {
  const n = (field: keyof FaultSpec) => HEADER_NAMES[field];
  const set = (Object.keys(HEADER_NAMES) as (keyof FaultSpec)[]).filter((f) => spec[f] !== undefined);
  if (!set.length) return 'no fault directive given';
  const pairs: [keyof FaultSpec, keyof FaultSpec][] = [
    ['reset', 'empty'],
    ['reset', 'status'],
    ['reset', 'malformed'],
    ['reset', 'streamCut'],
    ['reset', 'stall'],
    ['reset', 'noRetry'],
    ['reset', 'retryAfter'],
    ['empty', 'status'],
    ['empty', 'malformed'],
    ['empty', 'streamCut'],
    ['empty', 'stall'],
    ['empty', 'noRetry'],
    ['empty', 'retryAfter'],
    ['status', 'malformed'],
    ['status', 'streamCut'],
    ['status', 'stall'],
    ['streamCut', 'stall'],
  ];
  for (const [a, b] of pairs) {
    if (spec[a] !== undefined && spec[b] !== undefined) return `'${n(a)}' and '${n(b)}' cannot be combined`;
  }
  if (spec.retryAfter !== undefined && spec.status === undefined)
    return `'retry-after' needs 'status' (for example status=503;retry-after=2)`;
  if (spec.delayMs !== undefined && spec.delayMs > limits.maxDelayMs) {
    return `delay=${spec.delayMs} is above the server maximum of ${limits.maxDelayMs} ms (timeouts.stallMaxMs)`;
  }
  return undefined;
}
