// Judging: each relayed exchange held to the conformance runner's rules, its departures to the journal and report.
import type { Violation } from '../domain/journal/journal.js';
import type { RequestState } from '../pipeline/steps.js';
import { requestViolations, ViolationLog, type Judged } from './validation.js';

/** Judges exchanges once they are over, and keeps the validating proxy's report. */
export class Judge {
  constructor(
    readonly log: ViolationLog,
    /** Takes every secret of the configuration out of a text (not JSON-escaped). */
    private readonly scrub: (text: string) => string,
  ) {}

  /** The exchange's departures, the upstream's first (the header names the first), with no secret in them. */
  departures(j: Judged, found: readonly Violation[]): Violation[] {
    return [...found, ...requestViolations(j)].map((v) => ({
      rule: v.rule,
      expected: this.scrub(v.expected),
      actual: this.scrub(v.actual),
    }));
  }

  /** Judges an exchange: its departures go to the request's record and the report; returns them. */
  judge(state: RequestState, j: Judged, status: number, found: readonly Violation[], ms: number): Violation[] {
    const all = this.departures(j, found);
    if (all.length) state.violations = all;
    this.log.add(j, status, all, ms);
    return all;
  }
}
