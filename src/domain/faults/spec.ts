import type { Limits } from '../limits.js';
import { FAULT_KINDS, headerName, kindsOf, type FaultSpec } from './kinds.js';

export type { FaultSpec } from './kinds.js';

/** A fault in header form, e.g. `status=503;retry-after=2`: used in the journal and the admin API. */
export function describeFault(spec: FaultSpec): string {
  return kindsOf(spec)
    .map((k) => {
      const value = spec[k.field];
      return value === true ? k.header : `${k.header}=${value}`;
    })
    .join(';');
}

/** Limits that depend on the server's configuration. */
export interface FaultLimits {
  /** Longest accepted delay (the server's stall maximum). */
  readonly maxDelayMs: number;
  /** The kinds' bounds and how much of a refused value a 400 quotes (fixtures/limits.json); the package's when absent. */
  readonly faults?: FaultTexts;
}

/** What the header form reads from `faults` of fixtures/limits.json. */
export type FaultTexts = Pick<Limits['faults'], 'bounds' | 'maxQuotedChars'>;

/**
 * What is wrong with a combination of fault fields, in header-form words; undefined when it is sound.
 * Which kinds exclude or need which is written on their rows (kinds.ts).
 */
export function faultProblem(spec: FaultSpec, limits: FaultLimits): string | undefined {
  const given = kindsOf(spec);
  if (!given.length) return 'no fault directive given';
  const set = (field: string) => (spec as Record<string, unknown>)[field] !== undefined;
  for (const k of FAULT_KINDS) {
    if (!set(k.field) || !('excludes' in k)) continue;
    for (const other of k.excludes)
      if (set(other)) return `'${k.header}' and '${headerName(other)}' cannot be combined`;
  }
  for (const k of given) {
    if ('needs' in k && !set(k.needs.field))
      return `'${k.header}' needs '${headerName(k.needs.field)}' (for example ${k.needs.example})`;
    const value = spec[k.field];
    if ('serverMax' in k && typeof value === 'number' && value > limits.maxDelayMs)
      return `${k.header}=${value} is above the server maximum of ${limits.maxDelayMs} ms (timeouts.stallMaxMs)`;
  }
  return undefined;
}
