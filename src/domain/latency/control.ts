// The latency settings of one instance: the configuration's `latency` group over the catalogue's profiles,
// changed at run time by the admin API. It picks the profile a request answers with and hands out the seeded
// draws; the admission step (src/pipeline) holds slots and waits with what it picks.
import { ApiError, ERRORS } from '../../contract/errors.js';
import { pointerToParam } from '../../contract/validation.js';
import { forbiddenKeyAt, forbiddenKeyMessage } from '../../lib/keys.js';
import { PACING_HEADER } from '../../text/pacing.js';
import type { Catalogue } from '../catalogue.js';
import { ConfigError, type Config } from '../config.js';
import { drawsFor, profileProblem, profileSummary } from './distributions.js';
import type {
  Draws,
  LatencyChange,
  LatencyControl,
  LatencyView,
  ModelLatency,
  Profile,
  ProfileChoice,
} from './types.js';

/** No profile: every model answers at once. */
const OFF = 'off';
/** Each model its own profile, the catalogue's. */
const CATALOGUE = 'catalogue';

/** What the settings hold, the configuration's or changed by the admin API. */
interface Settings {
  profile: string;
  seed: number;
  profiles: Map<string, Profile>;
  /** The configuration's per-model names. */
  models: ReadonlyMap<string, string>;
  /** The admin API's per-model names, before the configuration's. */
  adminModels: Map<string, string>;
  /** True once the admin API set the global profile (its choices then say `admin`). */
  adminProfile: boolean;
}

/** Where a name was found, and the name itself: `off`, `catalogue` or a profile's. */
type Named = { readonly name: string; readonly from: ProfileChoice['from']; readonly global?: true };

export class Latency implements LatencyControl {
  private settings: Settings;
  /** Requests that drew since the seed was set: the next draws from the stream (seed, n). */
  private n = 0;

  constructor(
    private readonly config: Config['latency'],
    private readonly catalogue: Catalogue,
    /** How much of an unknown name a 400 quotes (messages.maxQuotedChars), how many profiles are held at most. */
    private readonly limits: { readonly maxQuotedChars: number; readonly maxProfiles: number },
  ) {
    this.settings = this.fromConfig();
  }

  choose(model: string, header?: string): ProfileChoice | undefined {
    if (header !== undefined) {
      if (header !== OFF && header !== CATALOGUE && !this.settings.profiles.has(header))
        throw new ApiError(ERRORS.INVALID_HEADER, {
          param: PACING_HEADER,
          message: `Invalid ${PACING_HEADER} header: '${header.slice(0, this.limits.maxQuotedChars)}' is not a latency profile. Use one of: ${[OFF, CATALOGUE, ...this.settings.profiles.keys()].join(', ')}.`,
        });
      return this.resolve(model, { name: header, from: 'header' });
    }
    return this.resolve(model, this.named(model));
  }

  draws(): Draws {
    return drawsFor(this.settings.seed, this.n++);
  }

  view(): LatencyView {
    const { profile, seed, profiles } = this.settings;
    return {
      profile,
      seed,
      draws: this.n,
      queueFullStatus: this.config.queueFullStatus,
      retryAfterMs: this.config.retryAfterMs,
      profiles: Object.fromEntries(
        [...profiles].map(([name, p]) => [name, { ...p, summary: profileSummary(p) }] as const),
      ),
      models: this.catalogue.models.map((m): ModelLatency => {
        const choice = this.choose(m.id);
        return { model: m.id, kind: m.kind, profile: choice?.name ?? null, from: choice?.from ?? null };
      }),
    };
  }

  update(change: LatencyChange): LatencyView {
    const forbidden = forbiddenKeyAt(change);
    if (forbidden !== undefined)
      throw invalid(pointerToParam(forbidden) ?? 'body', `${forbiddenKeyMessage(forbidden)}.`);
    // Every part is checked before any is applied: a refused change leaves the settings as they were.
    const profiles = new Map(this.settings.profiles);
    for (const [name, p] of Object.entries(change.profiles ?? {})) {
      const wrong = profileProblem(p);
      if (wrong) throw invalid(`profiles.${name}.${wrong.split(':')[0]!}`, `profiles.${name}.${wrong}`);
      profiles.set(name, p);
    }
    if (profiles.size > this.limits.maxProfiles)
      throw invalid(
        'profiles',
        `profiles: at most ${this.limits.maxProfiles} profiles are held (latencyProfiles.maxCount in fixtures/limits.json), the catalogue's included; DELETE /__admin/latency goes back to the configuration's.`,
      );
    const known = (name: string) => name === OFF || name === CATALOGUE || profiles.has(name);
    const list = () => [OFF, CATALOGUE, ...profiles.keys()].join(', ');
    if (change.profile !== undefined && !known(change.profile))
      throw invalid('profile', `profile: '${this.clip(change.profile)}' is not a profile. Use one of: ${list()}.`);
    const adminModels = new Map(this.settings.adminModels);
    for (const [model, name] of Object.entries(change.models ?? {})) {
      if (!this.catalogue.find(model))
        throw invalid(`models.${this.clip(model)}`, `models: '${this.clip(model)}' is not a model of the catalogue.`);
      if (name === null) adminModels.delete(model);
      else if (!known(name))
        throw invalid(
          `models.${model}`,
          `models.${model}: '${this.clip(name)}' is not a profile. Use one of: ${list()}.`,
        );
      else adminModels.set(model, name);
    }
    this.settings = {
      ...this.settings,
      profiles,
      adminModels,
      ...(change.profile === undefined ? {} : { profile: change.profile, adminProfile: true }),
      ...(change.seed === undefined ? {} : { seed: change.seed }),
    };
    if (change.seed !== undefined) this.n = 0;
    return this.view();
  }

  reset(): LatencyView {
    this.settings = this.fromConfig();
    this.n = 0;
    return this.view();
  }

  /** The configuration's settings over the catalogue's profiles; a name that is not a profile stops the start. */
  private fromConfig(): Settings {
    const profiles = new Map(this.catalogue.profiles);
    for (const [name, p] of Object.entries(this.config.profiles)) {
      const wrong = profileProblem(p);
      if (wrong) throw configError(`latency.profiles.${name}.${wrong}`);
      profiles.set(name, p);
    }
    if (profiles.size > this.limits.maxProfiles)
      throw configError(
        `latency.profiles: with the catalogue's, more than ${this.limits.maxProfiles} profiles (latencyProfiles.maxCount in fixtures/limits.json)`,
      );
    const list = () => [OFF, CATALOGUE, ...profiles.keys()].join(', ');
    const known = (name: string) => name === OFF || name === CATALOGUE || profiles.has(name);
    if (!known(this.config.profile))
      throw configError(`latency.profile: '${this.config.profile}' is not a profile (${list()})`);
    for (const [model, name] of Object.entries(this.config.models)) {
      if (!this.catalogue.find(model)) throw configError(`latency.models: '${model}' is not a model of the catalogue`);
      if (!known(name)) throw configError(`latency.models.${model}: '${name}' is not a profile (${list()})`);
    }
    return {
      profile: this.config.profile,
      seed: this.config.seed,
      profiles,
      models: new Map(Object.entries(this.config.models)),
      adminModels: new Map(),
      adminProfile: false,
    };
  }

  /** The name in force for a model without a header: the admin API's for it, the configuration's, the global one. */
  private named(model: string): Named {
    const s = this.settings;
    const admin = s.adminModels.get(model);
    if (admin !== undefined) return { name: admin, from: 'admin' };
    const configured = s.models.get(model);
    if (configured !== undefined) return { name: configured, from: 'config' };
    return { name: s.profile, from: s.adminProfile ? 'admin' : 'config', global: true };
  }

  /** A name as the profile it stands for: `off` none, `catalogue` the model's own. */
  private resolve(model: string, { name, from, global }: Named): ProfileChoice | undefined {
    if (name === OFF) return undefined;
    if (name === CATALOGUE) {
      const m = this.catalogue.find(model);
      const own = m && this.catalogue.profileOf(m);
      const profile = own === undefined ? undefined : this.settings.profiles.get(own);
      // The global `catalogue`, whoever set it, leaves each model its own: the catalogue is where it came from. A
      // header or a per-model setting naming `catalogue` is where the choice was made.
      return profile && { name: own!, profile, from: global ? 'catalogue' : from };
    }
    const profile = this.settings.profiles.get(name);
    return profile && { name, profile, from };
  }

  private clip(s: string): string {
    return s.slice(0, this.limits.maxQuotedChars);
  }
}

const invalid = (param: string, message: string) =>
  new ApiError(ERRORS.VALIDATION, { param, message: `Invalid latency change: ${message}` });

const configError = (line: string) => new ConfigError(`invalid configuration:\n  ${line}`);
