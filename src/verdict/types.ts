/**
 * The depths of checking: what the API document states, or also the mock's wire decisions; `gateway` puts the mock
 * behind the target as its upstream and compares both ends (docs/gateway.md).
 */
export type Profile = 'documented' | 'full' | 'gateway';

/**
 * How a case authenticates: the configured key (as `Bearer`, or with the scheme in lower case), one of
 * the four wrong ways the API document answers with 401, or a near miss: a credential the runner
 * derives from the key (`near-miss:key-truncated`), which the API document answers with 401 too.
 */
export type AuthMode = 'valid' | 'lowercase' | 'missing' | 'basic' | 'empty' | 'unknown' | `near-miss:${string}`;

/**
 * How binding a case's rule is, in RFC 2119's words: `must`, the API document states the rule and the
 * status its breach gets; `should`, the document describes a shape (a voice label, the example data URI)
 * without making it a rule, so a server that departs from it is warned about, not failed.
 */
export type Level = 'must' | 'should';

/** A case's outcome. Only `fail` fails a run; `warn` is a departure from a `should` case's shape (a failure under
 * --strict). */
export type Verdict = 'pass' | 'fail' | 'warn' | 'inconclusive' | 'not-applicable';

/** Names of the checks a case can carry; `status` is always first. */
export type CheckName =
  | 'status'
  | 'request-id'
  | 'error-envelope'
  | 'www-authenticate'
  | 'retry-after'
  | 'content-type'
  | 'success-schema'
  | 'sse'
  | 'usage'
  | 'stop'
  | 'seed'
  | 'error-param'
  | 'png-size'
  | 'audio'
  | 'mp4'
  | GatewayCheckName;

/** The checks of the gateway profile: what reached the upstream, and when, against what the client sent and got. */
type GatewayCheckName =
  | 'upstream'
  | 'forwarded'
  | 'answer'
  | 'events'
  | 'first-event'
  | 'pacing'
  | 'stream-end'
  | 'isolation'
  | 'timeout'
  | 'retries'
  | 'secret';

/** Paid work a case asks for, in the units providers bill. */
export interface Cost {
  tokens: number;
  images: number;
  videoSeconds: number;
  characters: number;
}

/** One conformance case, ready to send: placeholders filled, body built. */
export interface Case {
  readonly id: string;
  readonly operation: string;
  readonly description: string;
  /** The rule of the API document (or, for `full`-only cases, of the mock) that the case checks. */
  readonly rule: string;
  readonly tags: readonly string[];
  /** The smallest profile that runs the case. */
  readonly profile: Profile;
  /** How binding its rule is: a departure from a `should` case is a warning in the documented profile. */
  readonly level: Level;
  /** A correct server does paid work for it (it answers 200 on a paid operation). */
  readonly billable: boolean;
  readonly cost: Cost;
  readonly request: {
    readonly method: 'GET' | 'POST';
    readonly path: string;
    readonly auth: AuthMode;
    readonly headers: Readonly<Record<string, string>>;
    readonly body?: unknown;
    /** A body sent as these exact bytes instead of JSON. */
    readonly raw?: string;
  };
  readonly expect: { readonly status: number; readonly checks: readonly CheckName[] };
  /** The request field (a JSON pointer) whose rule the case breaks: the 400 names it in error.param. */
  readonly field?: string;
  /**
   * What the target must offer, else the case is not applicable: fault headers, a given image model, an
   * image model that takes this `response_format` value.
   */
  readonly requires?: {
    readonly faultHeaders?: boolean;
    readonly imageModel?: readonly string[];
    readonly imageResponseFormat?: string;
  };
  /** True when the case itself provokes a 429, so a 429 is not retried. */
  readonly tests429?: boolean;
}

/**
 * Why a body that began was not read to its end, though its status and headers are real: it passed
 * the size cap (the read was cancelled there), or the timeout fired while it was still arriving.
 */
export interface Incomplete {
  readonly cause: 'cap' | 'timeout';
  /** Reads after "the body": "exceeded the 16 MiB cap (--max-body) and was cut there". */
  readonly detail: string;
}

/** What came back for one request: status, headers and body, or the transport error. */
export interface Exchange {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The body, or as much of it as was read when it is incomplete. */
  readonly body: Buffer;
  /** For event streams: the size of each read (past 4096 reads, the older ones are merged; the last stays exact). */
  readonly reads?: readonly number[];
  /** For event streams: when each read arrived, in ms from the start of the request (a merged read: its last part). */
  readonly readMs?: readonly number[];
  readonly incomplete?: Incomplete;
  readonly error?: string;
  readonly ms: number;
}

/** One failed check: what was expected, what came back (a case's checks by default; client-check names its own). */
export interface CheckFailure<Check extends string = CheckName> {
  readonly check: Check;
  readonly expected: string;
  readonly actual: string;
}

/** Where a target's answer departs from the baseline's (--baseline): what differs, and each side's value. */
export interface Departure {
  readonly check: 'status' | 'error-envelope' | 'header' | 'stream';
  /** The part compared: "status", "error.code", "retry-after", ... */
  readonly what: string;
  readonly target: string;
  readonly baseline: string;
}

/** An answer as reports show it: cleaned, the secrets masked, the body cut to its start. */
export interface ShownAnswer {
  /** 0 when no answer came (`error` says why). */
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The start of the body: JSON, text and event streams as text (their lines kept), other types as size and type. */
  readonly body?: string;
  /** Why the body is not whole: "the body exceeded the 16 MiB cap (--max-body) and was cut there". */
  readonly incomplete?: string;
  /** The transport error, when no whole answer came. */
  readonly error?: string;
}

/** The outcome of one case, as every reporter sees it (keys already masked). */
export interface CaseResult {
  readonly case: Case;
  readonly verdict: Verdict;
  /** Why a case was inconclusive or not applicable; for a pass, what was not judged (a body cut short) or, in the
   * gateway profile, what was measured (times, attempts). */
  readonly reason?: string;
  readonly status?: number;
  readonly failures: readonly CheckFailure[];
  readonly attempts: number;
  readonly ms: number;
  /** The request as sent, with the key masked and long strings cut. */
  readonly request: {
    readonly method: string;
    readonly url: string;
    readonly headers: Readonly<Record<string, string>>;
    readonly body?: unknown;
  };
  /** The answer to the last attempt (absent when the case was not sent). */
  readonly response?: ShownAnswer;
  /** Where the answer departs from the baseline's (only with --baseline, and only when it does). */
  readonly departures?: readonly Departure[];
  /** The baseline's answer to the same request (only with --baseline, for a case that was sent). */
  readonly baselineResponse?: ShownAnswer;
}

/** How many results got each verdict, in the order the reports print them. */
export interface VerdictCounts {
  total: number;
  passed: number;
  failed: number;
  /** Departures from `should` cases, which do not fail the run (unless --strict makes them failures). */
  warnings: number;
  inconclusive: number;
  notApplicable: number;
}

/** Counts for the end of a run. */
export interface Summary extends VerdictCounts {
  billable: number;
  cost: Cost;
  ms: number;
}
