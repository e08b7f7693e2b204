import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findOperation } from '../contract/operations.js';
import { SchemaRegistry, schemaId } from '../contract/schemas.js';
import { toDetails } from '../contract/validation.js';
import { FIXTURES_DIR } from '../lib/paths.js';
import { deepFreeze } from '../lib/freeze.js';
import type { FaultBounds } from './faults/kinds.js';

/** A cloud-provider output format that the mock can write. */
interface AudioFormat {
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
    maxJsonValues: number;
    /** By operation id; an operation not listed takes the configured bodyLimit. */
    maxBodyBytes: Readonly<Record<string, number>>;
    maxDetails: number;
    maxValuesForAllErrors: number;
    largeBodyBytes: number;
    maxIgnoredFields: number;
    ignoredFieldsHeaderChars: number;
    maxRequestIdChars: number;
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
    maxModelChars: number;
  };
  readonly faults: {
    maxRules: number;
    maxQuotedChars: number;
    bounds: FaultBounds;
  };
  readonly latencyProfiles: { maxCount: number };
  readonly state: { healthPingMs: number };
  readonly feeds: { maxFollowers: number; heartbeatMs: number };
  readonly clientCheck: { burstMs: number };
  readonly messages: {
    maxQuotedChars: number;
    maxPathChars: number;
    maxReasonChars: number;
    maxJsonErrorChars: number;
    maxEncodingChars: number;
    maxPacingPartChars: number;
    maxSsmlValueChars: number;
  };
  readonly proxyReport: { maxRequests: number; maxBodyChars: number };
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
 * Reads fixtures/limits.json, unchecked. The mock reads it through packageLimits, checked; tests read it
 * here to compare with what the mock does.
 */
export function loadLimits(dir: string = FIXTURES_DIR): Limits {
  const file = join(dir, 'limits.json');
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Limits;
  } catch (err) {
    // Read at start-up, so the process stops here: the first line says which file, and what to do.
    throw new Error(
      `${file} could not be read as JSON (${(err as Error).message}); restore it from the package, or fix it against schemas/limits.json`,
    );
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
  if (!Object.hasOwn(outputFormats, defaultOutputFormat))
    throw new Error(`${file}: speech.defaultOutputFormat ${defaultOutputFormat} is not one of speech.outputFormats`);
  // And that each body limit names an operation that takes a body.
  for (const id of Object.keys(limits.requests.maxBodyBytes))
    if (!findOperation(id)?.requestSchema)
      throw new Error(`${file}: requests.maxBodyBytes names ${id}, which is no operation that takes a body`);
  return limits;
}

// Checked once per registry: every server of a process (tests build hundreds) shares the one reading.
const checked = new WeakMap<SchemaRegistry, Limits>();

/**
 * The package's limits (fixtures/limits.json), checked against schemas/limits.json: the one place the mock
 * reads them. createServices takes them from here into `services.limits`, and passes them on to whoever
 * needs a bound; tools that run without a server (the OpenAPI document, the conformance runner's defaults)
 * call it when they need them, and so does a Journal made without bounds (a test's); none reads it as it loads.
 */
export function packageLimits(schemas: SchemaRegistry = SchemaRegistry.shared()): Limits {
  let limits = checked.get(schemas);
  // Shared by every server of the process: frozen, so none can change another's bounds.
  if (!limits) checked.set(schemas, (limits = deepFreeze(checkLimits(loadLimits(), schemas))));
  return limits;
}
