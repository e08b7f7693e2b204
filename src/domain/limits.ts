import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemaId, type SchemaRegistry } from '../contract/schemas.js';
import { toDetails } from '../contract/validation.js';
import { FIXTURES_DIR } from '../lib/paths.js';

/** A cloud-provider output format that the mock can write. */
export interface AudioFormat {
  readonly sampleRate: number;
  readonly bitsPerSample: 8 | 16;
  readonly encoding: 'pcm' | 'alaw' | 'mulaw';
}

/**
 * Limits and defaults the API document leaves open (fixtures/limits.json). schemas/limits.json is what the file is
 * checked against and describes each field (why each bound exists); this type mirrors it field for field, which
 * test/domain/limits.test.ts holds it to.
 */
export interface Limits {
  readonly requests: {
    maxJsonDepth: number;
    maxDetails: number;
    maxValuesForAllErrors: number;
    largeBodyBytes: number;
    maxIgnoredFields: number;
    ignoredFieldsHeaderChars: number;
  };
  readonly records: {
    maxPathChars: number;
    maxDetails: number;
    maxHeaders: number;
    maxHeaderNameChars: number;
    maxHeaderChars: number;
    maxBodyChars: number;
    maxResponseBodyChars: number;
    maxStreamEvents: number;
    maxStreamEventChars: number;
    maxHeldResponseBytes: number;
  };
  readonly state: { healthPingMs: number };
  readonly images: { defaultSize: string; defaultQuality: string; defaultStyle: string };
  readonly imageEdit: { maxWidth: number; maxHeight: number };
  readonly video: { defaultDuration: number; defaultResolution: string; fps: number; tasksKept: number };
  readonly speech: {
    charactersPerSecond: number;
    minSeconds: number;
    maxSeconds: number;
    defaultOutputFormat: string;
    outputFormats: Record<string, AudioFormat>;
  };
}

/**
 * Reads fixtures/limits.json, unchecked: modules read their bounds from it as they load, before any schema is
 * compiled. createServices checks the file with checkLimits at start-up, so a broken one stops the server there.
 */
export function loadLimits(dir: string = FIXTURES_DIR): Limits {
  const file = join(dir, 'limits.json');
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Limits;
  } catch (err) {
    // Read as a module loads, so the process stops here: the first line says which file, and what to do.
    throw new Error(`${file} could not be read as JSON (${(err as Error).message}); restore it from the package, or fix it against schemas/limits.json`);
  }
}

/** Checks limits read from a file against schemas/limits.json; a broken file throws an Error naming each bad field. */
export function checkLimits(data: unknown, schemas: SchemaRegistry, file = 'fixtures/limits.json'): Limits {
  const errors = schemas.check(schemaId('limits.json'), data);
  if (errors.length) {
    const lines = toDetails(errors).map((d) => `  ${d.param ?? '(root)'}: ${d.message}`);
    throw new Error(`${file} does not match schemas/limits.json:\n${lines.join('\n')}`);
  }
  const limits = data as Limits;
  // A rule the schema cannot state: the default output format is one of the formats.
  const { defaultOutputFormat, outputFormats } = limits.speech;
  if (!Object.hasOwn(outputFormats, defaultOutputFormat)) throw new Error(`${file}: speech.defaultOutputFormat ${defaultOutputFormat} is not one of speech.outputFormats`);
  return limits;
}
