import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError, ERRORS } from '../contract/errors.js';
import { FIXTURES_DIR } from '../lib/paths.js';
import { schemaId, type SchemaRegistry } from '../contract/schemas.js';

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

/** The model catalogue, loaded and checked against schemas/catalogue.json at start-up. */
export class Catalogue {
  readonly models: readonly Model[];
  readonly voices: readonly { id: string; name: string }[];
  private readonly byId: Map<string, Model>;

  constructor(schemas: SchemaRegistry, dir: string = FIXTURES_DIR) {
    const data = JSON.parse(readFileSync(join(dir, 'models.json'), 'utf8')) as { models: Model[] };
    const errors = schemas.check(schemaId('catalogue.json'), data);
    if (errors.length) throw new Error(`fixtures/models.json${errors[0]!.instancePath}: ${errors[0]!.message}`);
    this.models = data.models;
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

const clip = (s: string) => (s.length > 80 ? `${s.slice(0, 77)}...` : s);
