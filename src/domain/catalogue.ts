import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError, ERRORS } from '../contract/errors.js';
import { FIXTURES_DIR } from '../lib/paths.js';
import { schemaId, type SchemaRegistry } from '../contract/schemas.js';
import { profileProblem } from './latency/distributions.js';
import type { Profile } from './latency/types.js';

import type { ModelKind } from '../contract/operations.js';

export type { ModelKind };

/** How an image model returns images: a link to the PNG, or the PNG inline as base64. */
export type ResponseFormat = 'url' | 'b64_json';

/** One entry of fixtures/models.json; per-model rules JSON Schema cannot state live in `limits`. */
export interface Model {
  readonly id: string;
  readonly kind: ModelKind;
  readonly owned_by: string;
  readonly created: number;
  /** The model's latency profile (a name in the catalogue's `profiles`); absent: its kind's default. */
  readonly profile?: string;
  readonly limits: {
    readonly tokenizer?: 'o200k_base' | 'cl100k_base';
    readonly context_window?: number;
    readonly max_output_tokens?: number;
    readonly max_n?: number;
    readonly sizes?: readonly string[];
    readonly durations?: readonly number[];
    readonly resolutions?: readonly string[];
    readonly modes?: readonly string[];
    readonly max_characters?: number;
    readonly locale?: string;
    readonly styles?: readonly string[];
    /** Image models: the values `response_format` may take; empty when the model does not accept the field. */
    readonly response_formats?: readonly ResponseFormat[];
    /** Image models: how images come back when the request has no `response_format`. */
    readonly default_response_format?: ResponseFormat;
  };
}

// Each with its article, so messages read "an image model", "a video model".
const KIND_NAMES: Record<ModelKind, string> = {
  text: 'a text model',
  image: 'an image model',
  video: 'a video model',
  voice: 'a text-to-speech model',
  'cloud-speech': 'a neural voice',
};

/** fixtures/models.json as its schema has it. */
interface CatalogueFile {
  readonly profiles?: Readonly<Record<string, Profile>>;
  readonly defaultProfiles?: Readonly<Partial<Record<ModelKind, string>>>;
  readonly models: Model[];
}

/** The model catalogue, loaded and checked against schemas/catalogue.json at start-up. */
export class Catalogue {
  readonly models: readonly Model[];
  readonly voices: readonly { id: string; name: string }[];
  /** The named latency profiles (docs/load-testing.md), in the catalogue's order. */
  readonly profiles: ReadonlyMap<string, Profile>;
  private readonly byId: Map<string, Model>;
  private readonly defaultProfiles: Readonly<Partial<Record<ModelKind, string>>>;

  constructor(schemas: SchemaRegistry, dir: string = FIXTURES_DIR) {
    const data = JSON.parse(readFileSync(join(dir, 'models.json'), 'utf8')) as CatalogueFile;
    const errors = schemas.check(schemaId('catalogue.json'), data);
    if (errors.length) throw new Error(`fixtures/models.json${errors[0]!.instancePath}: ${errors[0]!.message}`);
    this.models = data.models;
    this.profiles = new Map(Object.entries(data.profiles ?? {}));
    this.defaultProfiles = data.defaultProfiles ?? {};
    checkProfiles(this.profiles, this.defaultProfiles, data.models);
    this.byId = new Map(data.models.map((m) => [m.id, m]));
    if (this.byId.size !== data.models.length) throw new Error('fixtures/models.json: duplicate model id');
    // A rule the schema cannot state: a model that takes response_format must take its own default.
    for (const { id, limits } of data.models) {
      const formats = limits.response_formats;
      if (
        formats?.length &&
        limits.default_response_format !== undefined &&
        !formats.includes(limits.default_response_format)
      ) {
        throw new Error(
          `fixtures/models.json: ${id}: default_response_format ${limits.default_response_format} is not one of its response_formats`,
        );
      }
    }
    this.voices = (
      JSON.parse(readFileSync(join(dir, 'voices.json'), 'utf8')) as { voices: { id: string; name: string }[] }
    ).voices;
  }

  /** The name of a model's own latency profile: the one it names, else its kind's default; none without either. */
  profileOf(model: Model): string | undefined {
    return model.profile ?? this.defaultProfiles[model.kind];
  }

  /** A catalogue model by id, of any kind. */
  find(id: string): Model | undefined {
    return this.byId.get(id);
  }

  /** Models of one kind. */
  ofKind(kind: ModelKind): Model[] {
    return this.models.filter((m) => m.kind === kind);
  }

  /** The model for an endpoint, or a 400 that lists the models that fit. */
  require(id: string, kind: ModelKind, param = 'model'): Model {
    const model = this.byId.get(id);
    if (model && model.kind === kind) return model;
    const fit = this.ofKind(kind)
      .map((m) => m.id)
      .join(', ');
    const what = KIND_NAMES[kind];
    const noun = kind === 'cloud-speech' ? 'voice' : 'model';
    throw model
      ? new ApiError(ERRORS.WRONG_MODEL_KIND, {
          param,
          message: `Invalid '${param}': the model '${id}' is ${KIND_NAMES[model.kind]}, not ${what}. Use one of: ${fit}.`,
        })
      : new ApiError(ERRORS.MODEL_NOT_FOUND, {
          param,
          message: `Invalid '${param}': the ${noun} '${clip(id)}' does not exist. Use ${what}: ${fit}.`,
        });
  }

  /** A voice-provider voice, or a 400 that lists the voices. */
  requireVoice(id: string): { id: string; name: string } {
    const voice = this.voices.find((v) => v.id === id);
    if (voice) return voice;
    throw new ApiError(ERRORS.UNKNOWN_VOICE, {
      param: 'voice_id',
      message: `Invalid 'voice_id': the voice '${clip(id)}' does not exist. Use one of: ${this.voices.map((v) => v.id).join(', ')}.`,
    });
  }
}

/** Rules the schema cannot state: each profile's bounds in order, and every name a model or kind gives is a profile. */
function checkProfiles(
  profiles: ReadonlyMap<string, Profile>,
  defaults: Readonly<Partial<Record<ModelKind, string>>>,
  models: readonly Model[],
): void {
  for (const [name, profile] of profiles) {
    const wrong = profileProblem(profile);
    if (wrong) throw new Error(`fixtures/models.json: profiles.${name}.${wrong}`);
  }
  const known = () => [...profiles.keys()].join(', ');
  for (const [kind, name] of Object.entries(defaults)) {
    if (!profiles.has(name))
      throw new Error(`fixtures/models.json: defaultProfiles.${kind}: '${name}' is not a profile (${known()})`);
  }
  for (const { id, profile } of models) {
    if (profile !== undefined && !profiles.has(profile))
      throw new Error(`fixtures/models.json: ${id}: profile '${profile}' is not a profile (${known()})`);
  }
}

const clip = (s: string) => (s.length > 80 ? `${s.slice(0, 77)}...` : s);
