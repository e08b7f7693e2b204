// The latency model's shapes, written once: the catalogue and the configuration hold profiles as data
// (schemas/catalogue.json $defs/profile), the control picks the one in force for a request, the pipeline's
// admission holds a model's slots and waits, the stream writer draws its gaps, /metrics reads the load.
// The inspector's page takes its types from here too (a browser bundle): this file imports nothing.

/**
 * A distribution of durations in ms, as the catalogue and the configuration write it (WireMock's names for
 * uniform and lognormal). A bare number is `fixed`. `min` and `max` clamp every draw (normal: the floor and
 * the clamp; lognormal: the clamp of its long tail).
 */
export type Dist =
  | number
  | { readonly type: 'fixed'; readonly ms: number }
  | { readonly type: 'uniform'; readonly lower: number; readonly upper: number }
  | {
      readonly type: 'normal';
      readonly mean: number;
      readonly sd: number;
      readonly min?: number;
      readonly max?: number;
    }
  | {
      readonly type: 'lognormal';
      readonly median: number;
      readonly sigma: number;
      readonly min?: number;
      readonly max?: number;
    };

/** What a distribution gives, worked out from it (not sampled): the figures a measurement is checked against. */
export interface DistSummary {
  readonly mean: number;
  readonly p50: number;
  readonly p99: number;
}

/** A latency profile: how a model answers in time, and how much load it takes. Every field is optional. */
export interface Profile {
  readonly description?: string;
  /** Time to first token (chat), from when the request holds a slot. */
  readonly ttft?: Dist;
  /** Added to the time to first token per prompt token (prefill), in ms. */
  readonly prefillMsPerToken?: number;
  /** The gap before each later token, in ms (one draw per token; an event of several tokens waits their sum). */
  readonly interToken?: Dist;
  /** Media (images, image edits, speech): the whole answer's time. Video: the task's generation time. */
  readonly duration?: Dist;
  /** Requests of the model answered at once, per instance; the rest wait (absent: no cap). */
  readonly maxRunning?: number;
  /** Requests that may wait for a slot; one more is refused (429 with retry-after, or 503). Default 0 with a cap. */
  readonly maxWaiting?: number;
  /** How much slower every drawn time is with `maxRunning` requests running: 1 + (f - 1)(running - 1)/(maxRunning - 1),
   * as vLLM simulators scale latency under load. Default 1 (no slowdown). */
  readonly loadFactor?: number;
}

/** The profile in force for one request, and where it came from (for the journal, the inspector and the docs). */
export interface ProfileChoice {
  readonly name: string;
  readonly profile: Profile;
  /** `header` (X-Mock-Pacing: profile=NAME), `admin` (set at run time), `config` (the configuration's latency
   * settings), `catalogue` (the model's own, with latency.profile "catalogue"). */
  readonly from: 'header' | 'admin' | 'config' | 'catalogue';
}

/** Seeded draws for one request: the n-th request with a profile draws from the stream (seed, n). */
export interface Draws {
  /** One draw of `dist`, in ms, before the load factor. */
  draw(dist: Dist): number;
}

/** How many requests of each model run and wait on this instance, for /metrics and the inspector. */
export interface ModelLoad {
  running(model: string): number;
  waiting(model: string): number;
  /** The models that have had a request with a profile (the others run and wait nothing). */
  models(): Iterable<string>;
}

/** A model's line in the latency view: the profile in force without a header, and where it came from. */
export interface ModelLatency {
  readonly model: string;
  readonly kind: string;
  /** The profile's name, or null when the model answers at once. */
  readonly profile: string | null;
  readonly from: ProfileChoice['from'] | null;
  /** This instance's requests of the model running and waiting for a slot (the admin API adds them from
   * services.load). */
  readonly running?: number;
  readonly waiting?: number;
}

/** The latency settings in force (GET /__admin/latency, the inspector), with each profile's figures worked out. */
export interface LatencyView {
  /** `off` (no profile: answers at once, pacing as configured), `catalogue` (each model its own), or one profile's
   * name for every model. */
  readonly profile: string;
  readonly seed: number;
  /** Requests that drew from the seed since it was set (the next one draws from stream (seed, draws)). */
  readonly draws: number;
  readonly queueFullStatus: 429 | 503;
  readonly retryAfterMs: number;
  readonly profiles: Readonly<
    Record<string, Profile & { readonly summary: Partial<Record<'ttft' | 'interToken' | 'duration', DistSummary>> }>
  >;
  readonly models: readonly ModelLatency[];
}

/**
 * The latency settings of one instance: the configuration's (`latency`), changed at run time through the admin
 * API (PUT /__admin/latency; DELETE goes back to the configuration). Each instance keeps its own, as each
 * replica of a model server does.
 */
export interface LatencyControl {
  /**
   * The profile for a request of `model` (a catalogue id), `header` the name the request's X-Mock-Pacing
   * `profile=` part gave (`off` for none); undefined: the model answers at once. An unknown header name is a
   * 400 (invalid_header) listing the profiles.
   */
  choose(model: string, header?: string): ProfileChoice | undefined;
  /** The draws of the next request with a profile: the n-th draws from the stream (seed, n). */
  draws(): Draws;
  view(): LatencyView;
  /** Applies a change (the PUT body, checked against its schema); a name that is not a profile is a 400. */
  update(change: LatencyChange): LatencyView;
  /** Back to the configuration's settings, the draws from the start. */
  reset(): LatencyView;
}

/** The body of PUT /__admin/latency: each field given replaces the one in force; a model set to null goes back to the
 * profile it had without a change. Setting `seed` starts its draws again. */
export interface LatencyChange {
  readonly profile?: string;
  readonly seed?: number;
  readonly profiles?: Readonly<Record<string, Profile>>;
  readonly models?: Readonly<Record<string, string | null>>;
}
