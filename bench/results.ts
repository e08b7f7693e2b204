// The shapes of a bench run's results, as --json writes them. A module of types only, importing none of the
// phases that fill them in: phases.ts, state.ts and targets.ts all use them without importing one another.
import type { LoadFigures, ScenarioResult } from './report.js';

/** Everything one run measured, as written by --json. */
export interface BenchResults {
  machine: Record<string, string | number>;
  options: Record<string, unknown>;
  scenarios: ScenarioResult[];
  streams?: { mock: StreamsFigures; baseline: StreamsFigures | null };
  linearity?: LinearityResult[];
  startup?: { meMs: number[]; chatMs: number[]; meMedianMs: number; chatMedianMs: number };
  conformance?: { available: boolean; seconds?: number; exitCode?: number | null; summary?: string };
  /** The same requests with the state in memory and in Redis (`--state redis://`). */
  state?: StateBench;
  /** Phases that could not be measured, with the reason. */
  failures?: { phase: string; error: string }[];
}

/** The many-concurrent-streams check for one server. */
export interface StreamsFigures {
  readonly count: number;
  readonly completed: number;
  readonly seconds: number;
  readonly peakRssMiB: number | null;
}

/** One linearity pair: per-request cost of the small and the large request. */
export interface LinearityResult {
  readonly name: string;
  readonly unit: string;
  readonly small: { title: string; meanMs: number; requests: number };
  readonly large: { title: string; meanMs: number; requests: number };
  readonly workRatio: number;
  readonly costRatio: number;
  /** costRatio / workRatio: at most about 1 when the cost grows no faster than the work. */
  readonly perUnit: number;
}

/** One scenario with its state in memory and in Redis. */
export interface StateRow {
  readonly name: string;
  readonly title: string;
  readonly memory: LoadFigures;
  readonly redis: LoadFigures;
}

/** What the phase found: the rows, or why it could not run. */
export interface StateBench {
  readonly available: boolean;
  readonly reason?: string;
  readonly redisVersion?: string;
  readonly rows?: StateRow[];
}
