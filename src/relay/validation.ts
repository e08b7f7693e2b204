// The validating proxy's checks: the conformance runner's own (checksFor, evaluate), run on live exchanges.
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ApiError } from '../contract/errors.js';
import type { Operation } from '../contract/operations.js';
import type { SchemaRegistry } from '../contract/schemas.js';
import type { Violation } from '../domain/journal/journal.js';
import { packageLimits, type Limits } from '../domain/limits.js';
import { checksFor, evaluate } from '../verdict/checks.js';
import { zeroCost } from '../verdict/cost.js';
import { summarize, type Report } from '../verdict/report.js';
import { jsonReporter } from '../verdict/reporters/json.js';
import { junitReporter } from '../verdict/reporters/junit.js';
import type { Case, CaseResult, CheckName, Exchange, Profile } from '../verdict/types.js';
import { writeAtomic } from './cassette.js';

// Checks that download the media a link points to: not run inline, they would add a second upstream call to every
// answer.
const DOWNLOADS: ReadonlySet<CheckName> = new Set<CheckName>(['png-size', 'mp4']);

/** One exchange to judge. */
export interface Judged {
  readonly requestId: string;
  readonly op: Operation;
  readonly method: string;
  readonly path: string;
  readonly body: Record<string, unknown> | undefined;
  /** What the request schema says: undefined when the body matches it, else the error the mock would answer. */
  readonly refusal: ApiError | undefined;
  /**
   * The mock's own refusal of a body the schema accepts, by a rule beyond the schema (a per-model limit,
   * a model or voice not in its catalogue, an image it cannot decode, SSML it cannot parse). Worked out
   * only when the upstream answers such a body with a 400, which is then judged as that refusal: the
   * upstream refuses what the mock refuses, and breaks no rule.
   */
  readonly unsettled?: ApiError;
}

/** The case the conformance runner would have written for this request: its expected status and checks. */
function caseOf(j: Judged, profile: Profile): Case {
  const success = j.op.success.status ?? 200;
  const status = j.refusal?.status ?? j.unsettled?.status ?? success;
  const base = {
    operation: j.op.id,
    request: { method: j.method as 'GET' | 'POST', path: j.path, auth: 'valid' as const, headers: {}, body: j.body },
  };
  const checks = checksFor({ ...base, expect: { status, checks: [] } }, profile).filter((c) => !DOWNLOADS.has(c));
  const rule = j.refusal
    ? `a request that breaks the request schema is refused with ${status} (${j.refusal.message})`
    : j.unsettled
      ? `a ${j.op.id} request that breaks a rule beyond the request schema is refused with ${status} (${j.unsettled.message})`
      : `a valid ${j.op.id} request succeeds with ${status}`;
  return {
    id: j.requestId,
    description: `${j.method} ${j.path}`,
    rule,
    tags: ['proxy'],
    profile,
    level: 'must',
    billable: false,
    cost: zeroCost(),
    expect: { status, checks },
    ...base,
  };
}

/** The request's own violation: a body the request schema refuses. */
export function requestViolations(j: Judged): Violation[] {
  if (!j.refusal) return [];
  return [
    { rule: 'request.schema', expected: `a body matching the ${j.op.id} request schema`, actual: j.refusal.message },
  ];
}

/**
 * The response's violations, by the conformance runner's checks for the case this request makes.
 * An upstream that is busy or failing (429, 5xx) on a valid request breaks no rule: it is not judged.
 */
export async function responseViolations(
  j: Judged,
  ex: Exchange,
  profile: Profile,
  registry: SchemaRegistry,
): Promise<Violation[]> {
  if (!j.refusal && (ex.status === 429 || ex.status >= 500)) return [];
  const failures = await evaluate(caseOf(j, profile), ex, {
    registry,
    limits: packageLimits(registry),
    timeoutMs: 10_000,
  });
  return failures.map((f) => ({ rule: `response.${f.check}`, expected: f.expected, actual: f.actual }));
}

/** Whether a violation is the client's own (a request the request schema refuses), not the upstream's departure. */
const isClientMistake = (v: Violation): boolean => v.rule.startsWith('request.');

/** The x-mock-violations header: how many, and the first rule (the upstream's departures first). */
export const violationsHeader = (vs: readonly Violation[]): string => `${vs.length}; ${vs[0]!.rule}`;

/**
 * Collects the exchanges the proxy judged and writes them as the conformance runner's JSON and JUnit reports. An
 * exchange with a departure of the upstream is a failed case; one whose only violation is the client's (an invalid
 * request the upstream refused as it should) is a warning, so that a report's failures are the upstream's alone.
 */
export class ViolationLog {
  private readonly reportedCases: CaseResult[] = [];
  private seen = 0;
  private failed = 0;
  private warned = 0;
  private readonly started = Date.now();

  constructor(
    private readonly target: string,
    private readonly profile: Profile,
    private readonly scrub: (text: string) => string,
    /** What the report keeps (proxyReport of fixtures/limits.json): its counts cover every exchange. */
    private readonly bounds: Limits['proxyReport'],
  ) {}

  /** Counts an exchange; one with violations is kept for the report. */
  add(j: Judged, status: number, violations: readonly Violation[], ms: number): void {
    this.seen++;
    if (!violations.length) return;
    const upstream = violations.some((v) => !isClientMistake(v));
    if (upstream) this.failed++;
    else this.warned++;
    if (this.reportedCases.length >= this.bounds.maxRequests) return;
    const body = j.body === undefined ? undefined : JSON.stringify(j.body);
    const maxBody = this.bounds.maxBodyChars;
    this.reportedCases.push({
      // The client's mistake breaks no rule of the upstream's: a should case, a warning.
      case: { ...caseOf(j, this.profile), ...(upstream ? {} : { level: 'should' as const }) },
      verdict: upstream ? 'fail' : 'warn',
      status,
      failures: violations.map((v) => ({ check: v.rule as CheckName, expected: v.expected, actual: v.actual })),
      attempts: 1,
      ms,
      request: {
        method: j.method,
        url: j.path,
        headers: {},
        ...(body === undefined ? {} : { body: body.length > maxBody ? `${body.slice(0, maxBody)}...` : body }),
      },
    });
  }

  /** Exchanges judged, those with at least one violation, and those whose only violations were the client's. */
  get counts(): { exchanges: number; withViolations: number; clientMistakes: number } {
    return { exchanges: this.seen, withViolations: this.failed + this.warned, clientMistakes: this.warned };
  }

  /** The report as the conformance runner's reporters see it: an upstream's departure is a failed case, a client's
   * invalid request the upstream refused is a warning. */
  report(): Report {
    const summary = summarize(this.reportedCases, Date.now() - this.started);
    summary.total = this.seen;
    summary.failed = this.failed;
    summary.warnings = this.warned;
    summary.passed = this.seen - this.failed - this.warned;
    return { info: { target: this.target, profile: this.profile, cases: [] }, results: this.reportedCases, summary };
  }

  /** Writes the JSON report to `file` and the JUnit XML beside it (for a .xml name, the other way round). */
  async write(file: string): Promise<string[]> {
    const report = this.report();
    const xml = /\.xml$/i.test(file);
    const other = xml ? file.replace(/\.xml$/i, '.json') : `${file.replace(/\.json$/i, '')}.xml`;
    const json = this.scrub(jsonReporter().end(report));
    const junit = this.scrub(junitReporter().end(report));
    await mkdir(dirname(file), { recursive: true });
    await writeAtomic(file, xml ? junit : json);
    await writeAtomic(other, xml ? json : junit);
    return [file, other];
  }
}
