import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Model } from '../../domain/catalogue.js';
import { ERRORS } from '../../contract/errors.js';
import type { Limits } from '../../domain/limits.js';
import { operations } from '../../contract/operations.js';
import { FIXTURES_DIR, ROOT, SCHEMAS_DIR } from '../../lib/paths.js';
import { schemaId } from '../../contract/schemas.js';
import type { Json } from './components.js';
import { buildOpenApi, serversFor, type OpenApiInput } from './document.js';

export { buildOpenApi, DEFAULT_SERVER_URL, type OpenApiInput } from './document.js';

const readJson = (path: string): Json => JSON.parse(readFileSync(path, 'utf8')) as Json;

/** The package's own inputs: its operations table, schemas/, error table, fixtures (`limits`: the checked
 * fixtures/limits.json) and version. */
export function packageInput(limits: Limits): OpenApiInput {
  const schemas = new Map<string, Json>();
  for (const file of readdirSync(SCHEMAS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort())
    schemas.set(schemaId(file), readJson(join(SCHEMAS_DIR, file)));
  const pkg = readJson(join(ROOT, 'package.json')) as { version: string; license: string };
  return {
    operations,
    schemas,
    errors: ERRORS,
    errorSchema: schemaId('error.json'),
    chunkSchema: schemaId('chat-completion-chunk.json'),
    version: pkg.version,
    license: pkg.license,
    models: (readJson(join(FIXTURES_DIR, 'models.json')) as { models: Model[] }).models,
    voices: (readJson(join(FIXTURES_DIR, 'voices.json')) as { voices: { id: string }[] }).voices,
    outputFormats: Object.keys(limits.speech.outputFormats),
    defaultOutputFormat: limits.speech.defaultOutputFormat,
    faultBounds: limits.faults.bounds,
  };
}

// Built once per set of checked limits (a server's, the command line's): the other inputs never change.
const cached = new WeakMap<Limits, Json>();

/** The package's OpenAPI document with the given server, from `limits` (the checked fixtures/limits.json); shared, so
 * read-only. */
export function openApiDocument(serverUrl: string, limits: Limits): Json {
  let doc = cached.get(limits);
  if (!doc) cached.set(limits, (doc = buildOpenApi(packageInput(limits))));
  return { ...doc, servers: serversFor(serverUrl) };
}

/** The document as pretty-printed JSON text, ending in a newline. */
export const openApiText = (serverUrl: string, limits: Limits): string =>
  `${JSON.stringify(openApiDocument(serverUrl, limits), null, 2)}\n`;
