import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES_DIR } from '../lib/paths.js';

/** A cloud-provider output format that the mock can write. */
export interface AudioFormat {
  readonly sampleRate: number;
  readonly bitsPerSample: 8 | 16;
  readonly encoding: 'pcm' | 'alaw' | 'mulaw';
}

/** Limits and defaults the API document leaves open (fixtures/limits.json). */
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
   * Request records (journal entries, log lines): longer paths are cut to this many characters; of a
   * stream, the journal keeps the first maxStreamEvents events and maxStreamEventChars characters of their text.
   */
  readonly records: { maxPathChars: number; maxStreamEvents: number; maxStreamEventChars: number };
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

/** Reads fixtures/limits.json. */
export function loadLimits(dir: string = FIXTURES_DIR): Limits {
  return JSON.parse(readFileSync(join(dir, 'limits.json'), 'utf8')) as Limits;
}
