// Per operation: valid bodies from the request schema, with the catalogue deciding the fields the schema leaves open.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { FIXTURES_DIR, SCHEMAS_DIR } from '../../src/lib/paths.js';
import { tinyGif, tinyJpeg, tinyPng, tinyWebp } from '../support/index.js';
import { validArbitrary, type Overrides, type Schema } from './schemaArbitrary.js';

interface Model {
  id: string;
  kind: string;
  limits: { max_n?: number; max_output_tokens?: number; response_formats?: string[] };
}

const models = (JSON.parse(readFileSync(join(FIXTURES_DIR, 'models.json'), 'utf8')) as { models: Model[] }).models;
const voices = (
  JSON.parse(readFileSync(join(FIXTURES_DIR, 'voices.json'), 'utf8')) as { voices: { id: string }[] }
).voices.map((v) => v.id);
const ofKind = (kind: string) => models.filter((m) => m.kind === kind);
const ids = (kind: string) => fc.constantFrom(...ofKind(kind).map((m) => m.id));

/** A request schema file as data. */
export const requestSchema = (file: string): Schema =>
  JSON.parse(readFileSync(join(SCHEMAS_DIR, file), 'utf8')) as Schema;

// Small real images in each accepted format, as base64 or a data URI.
const image = fc
  .tuple(
    fc.constantFrom(['png', tinyPng], ['jpeg', tinyJpeg], ['gif', tinyGif], ['webp', tinyWebp]) as fc.Arbitrary<
      [string, (w: number, h: number) => Buffer]
    >,
    fc.integer({ min: 1, max: 24 }),
    fc.integer({ min: 1, max: 24 }),
    fc.boolean(),
  )
  .map(([[type, make], w, h, uri]) => (uri ? `data:image/${type};base64,` : '') + make(w, h).toString('base64'));

const smallestMaxTokens = Math.min(...ofKind('text').map((m) => m.limits.max_output_tokens ?? Infinity));

/** What the property test needs of one operation. */
export interface BodySpec {
  readonly id: string;
  readonly schemaFile: string;
  readonly valid: fc.Arbitrary<Record<string, unknown>>;
}

function spec(
  id: string,
  schemaFile: string,
  overrides: Overrides,
  fix: (b: Record<string, unknown>) => Record<string, unknown> = (b) => b,
): BodySpec {
  return {
    id,
    schemaFile,
    valid: (validArbitrary(requestSchema(schemaFile), overrides) as fc.Arbitrary<Record<string, unknown>>).map(fix),
  };
}

/** The six documented operations that take a body. */
export const BODY_SPECS: readonly BodySpec[] = [
  spec('chat.completions', 'chat-request.json', {
    model: ids('text'),
    max_tokens: fc.integer({ min: 1, max: smallestMaxTokens }),
    max_completion_tokens: fc.integer({ min: 1, max: smallestMaxTokens }),
  }),
  spec(
    'images.generate',
    'image-generation-request.json',
    {
      model: ids('image'),
      // An inline PNG costs a full encode: one request in ten asks for one.
      response_format: fc.constantFrom('url', 'url', 'url', 'url', 'url', 'url', 'url', 'url', 'url', 'b64_json'),
      n: fc.integer({ min: 1, max: 4 }),
    },
    (b) => {
      const limits = models.find((m) => m.id === b.model)?.limits;
      // A model that does not take response_format (gpt-image-1) refuses it: a valid body leaves it out.
      const { response_format, ...rest } = b;
      const format =
        response_format !== undefined && (limits?.response_formats ?? []).includes(response_format as string)
          ? { response_format }
          : {};
      return { ...rest, ...format, ...(b.n !== undefined ? { n: Math.min(b.n as number, limits?.max_n ?? 1) } : {}) };
    },
  ),
  spec('images.edit', 'image-edit-request.json', { image }),
  spec('video.generate', 'video-request.json', { model: ids('video') }),
  spec('voice.tts', 'voice-tts-request.json', { voice_id: fc.constantFrom(...voices), model_id: ids('voice') }),
  spec('cloud.speech', 'cloud-speech-request.json', { voice: ids('cloud-speech') }),
];
