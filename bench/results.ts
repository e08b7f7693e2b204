// The shapes of a bench run's results, as --json writes them. A module of types only, importing none of the
// phases that fill them in: phases.ts, state.ts and targets.ts all use them without importing one another.

/** Everything one run measured, as written by --json. */
export interface BenchResults {
  machine: Record<string, string | number>;
  options: Record<string, unknown>;
  scenarios: ScenarioResult[];
  streams?: { mock: StreamsFigures; baseline: StreamsFigures | null };
  /** Many paced streams at once: how late their tokens arrive from each server (`--only streams-paced`). */
  paced?: PacedResult;
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

/** The paced-streams scenario: what it asked for and each server's figures, measured in turn. */
export interface PacedResult {
  readonly streams: number;
  readonly tokens: number;
  readonly tps: number;
  readonly ttftMs: number;
  readonly rampS: number;
  /** Rounds measured: the figures of the floor and the mock are their medians (see combinePaced); aimock is measured once. */
  readonly rounds?: number;
  /** Bare node:http sending the mock's stream paced by one timer over a heap of streams (bench/pacedFloor.ts). */
  readonly floor: PacedFigures;
  /** The mock as `npm start` runs it. */
  readonly mock: PacedFigures;
  /** aimock with the same ttft and tps and a reply of as many tokens; null when skipped or it failed. */
  readonly aimock: PacedFigures | null;
  /** The mock with `--metrics off`, measured after it: what the metrics cost a paced stream (absent: not measured). */
  readonly unmetered?: PacedFigures | null;
  /**
   * Each round's figures of the floor and the mock, measured seconds apart: the targets compare the mock with the
   * floor round by round and take the median of those ratios (pacedRatios), as a host's load changes between rounds.
   */
  readonly perRound?: { readonly floor: readonly PacedFigures[]; readonly mock: readonly PacedFigures[] };
}

/** The figures of one server's paced streams. */
export interface PacedFigures {
  readonly streams: number;
  /** Streams that ended with status 200, every event and [DONE]. */
  readonly completed: number;
  /** Streams that ended without a transport error but incomplete (or with another status). */
  readonly failed: number;
  /** Streams ended by a transport error or by the client's time limit. */
  readonly errors: number;
  /** The errors by code ('timeout': ended by the client's time limit). */
  readonly errorCodes: Readonly<Record<string, number>>;
  /** Tokens received over all streams. */
  readonly tokens: number;
  /** Lateness of tokens 1.. of each stream: arrival - (the stream's first token's arrival + k / tps). */
  readonly latenessP50Ms: number;
  readonly latenessP99Ms: number;
  readonly latenessMaxMs: number;
  /** Arrival of a stream's first token - (its request sent + ttft), the 99th percentile over streams. */
  readonly firstTokenP99Ms: number;
  /** Times two consecutive tokens of a stream arrived more than two intervals apart. */
  readonly gaps: number;
  /** The server's CPU seconds over the run (user + system, its children included). */
  readonly cpuSeconds: number | null;
  readonly cpuUsPerToken: number | null;
  readonly peakRssMiB: number | null;
  /** From the first request to the last stream's end. */
  readonly seconds: number;
  /**
   * The load client's own state over the run: its CPU seconds per second, and the 99th percentile of its
   * event loop's delay. Near 1 or tens of ms, the client was late reading, not the server writing.
   */
  readonly client: { readonly cpuShare: number; readonly loopDelayP99Ms: number };
  /**
   * CPU seconds other processes used on the server's core over the run; null when not pinned. On a shared
   * host, a server late while this is high was not alone on its core.
   */
  readonly coreOtherSeconds: number | null;
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

/** What one server did under load in one scenario. */
export interface LoadFigures {
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  /** Peak resident set size of the server process in MiB; null where it cannot be read. */
  readonly peakRssMiB: number | null;
  /**
   * Server CPU time (user + system) per answered request in microseconds: unlike req/s, it does not
   * change when other processes take turns on the server's core.
   */
  readonly cpuUsPerReq: number | null;
  readonly responses: number;
  /** Responses whose status was not the scenario's expected one, plus transport errors. */
  readonly unexpected: number;
}

/** One scenario measured on both servers, with the mock's figures as ratios to the baseline's. */
export interface ScenarioResult {
  readonly name: string;
  readonly title: string;
  readonly baseline: LoadFigures | null;
  /** The stack floor (minimal Koa + router + body parser + Ajv), where measured. */
  readonly floor?: LoadFigures | null;
  readonly mock: LoadFigures;
  readonly ratio: Ratios;
  /** The floor's figures as ratios to the baseline: the share of the budget the stack itself takes. */
  readonly floorRatio?: Ratios | null;
  /** The mock with its logging off (`--log-level silent`), in the chat scenarios. */
  readonly silent?: LoadFigures;
  /** The mock as `npm start` runs it but with `--metrics off`, in the chat scenarios: what the metrics cost. */
  readonly unmetered?: LoadFigures;
  /** aimock on its own path with the same request body, in the chat scenarios, and the status it answers. */
  readonly aimock?: LoadFigures;
  readonly aimockStatus?: number;
  /** Another build of the mock (`--before`), as `npm start` runs it, in the chat scenarios: the build a change is
   * measured against, in the same run. */
  readonly before?: LoadFigures;
  /** The build before's req/s over the floor's and aimock's, one ratio per round: its own targets in the same run. */
  readonly beforePaired?: Partial<Record<'floor' | 'aimock', readonly number[]>>;
  /**
   * The mock's req/s over each server measured next to it, one ratio per round (the two measured seconds
   * apart, in turned order): the comparisons the targets make are the medians of these.
   */
  readonly paired?: Partial<Record<Beside, readonly number[]>>;
}

/** The servers measured beside the mock in the chat scenarios. */
export type Beside = 'silent' | 'unmetered' | 'floor' | 'aimock' | 'before';

/** Figures of a server as ratios to the baseline's. */
export interface Ratios {
  readonly reqPerSec: number | null;
  readonly p50: number | null;
  readonly p99: number | null;
  readonly peakRss: number | null;
  readonly cpuPerReq: number | null;
}
