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
 * Limits and defaults the API document leaves open (fixtures/limits.json), checked against schemas/limits.json;
 * this type mirrors the schema field for field, which test/domain/limits.test.ts holds it to.
 */
export interface Limits {
  /**
   * Request bodies: deepest nesting (JSON.parse recurses once per level, so millions of levels would block
   * the event loop), most violations listed in `details`, and the size past which a body is checked to its
   * first violation only (listing every violation of a huge broken body would exhaust the heap), and the
   * size from which a body waits for room in the body budget (config bodyMemory) before it is read; and
   * how many ignored body fields (fields the schema does not list) a request names, in how many
   * characters of its x-mock-ignored-fields header.
   */
  readonly requests: {
    maxJsonDepth: number;
    maxDetails: number;
    maxValuesForAllErrors: number;
    largeBodyBytes: number;
    maxIgnoredFields: number;
    ignoredFieldsHeaderChars: number;
  };
  /**
   * Request records (journal entries, log lines), and what the journal and the inspector's body store keep
   * of a request, so their memory stays bounded however large the requests.
   */
  readonly records: {
    /** Longer paths are cut to this many characters (then `...`), in journal entries and log lines. */
    maxPathChars: number;
    /** An entry keeps the first this many validation violations of `details`. */
    maxDetails: number;
    /** An entry keeps at most this many request headers, and as many response headers. */
    maxHeaders: number;
    /** A header name is cut to this many characters. */
    maxHeaderNameChars: number;
    /** A header value is cut to this many characters (then `...`). */
    maxHeaderChars: number;
    /** An entry keeps the first this many characters of the request body (`request.body`; `request.bodyChars` is the whole length). */
    maxBodyChars: number;
    /** An entry keeps the first this many characters of a text response body (`responseBody`; `responseBodyChars` is the whole length); longer ones go to the body store. */
    maxResponseBodyChars: number;
    /** Of a stream, an entry keeps at most this many events... */
    maxStreamEvents: number;
    /** ...within this many characters of their text (`sse.total` counts every event written). */
    maxStreamEventChars: number;
    /** The body store (binary answers and text longer than maxResponseBodyChars, GET /__admin/requests/:id/body) holds at most this many bytes, text counted at two a character; the oldest go first. */
    maxHeldResponseBytes: number;
  };
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
  return JSON.parse(readFileSync(join(dir, 'limits.json'), 'utf8')) as Limits;
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
