import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Model } from '../../domain/catalogue.js';
import { ERRORS } from '../../contract/errors.js';
import { packageLimits } from '../../domain/limits.js';
import { operations } from '../../contract/operations.js';
import { FIXTURES_DIR, ROOT, SCHEMAS_DIR } from '../../lib/paths.js';
import { schemaId } from '../../contract/schemas.js';
import type { Json } from './components.js';
import { buildOpenApi, DEFAULT_SERVER_URL, serversFor, type OpenApiInput } from './document.js';

export { buildOpenApi, DEFAULT_SERVER_URL, type OpenApiInput } from './document.js';

const readJson = (path: string): Json => JSON.parse(readFileSync(path, 'utf8')) as Json;

/** The package's own inputs: its operations table, schemas/, error table, fixtures and version. */
export function packageInput(): OpenApiInput {
  const schemas = new Map<string, Json>();
  for (const file of readdirSync(SCHEMAS_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort())
    schemas.set(schemaId(file), readJson(join(SCHEMAS_DIR, file)));
  const pkg = readJson(join(ROOT, 'package.json')) as { version: string; license: string };
  const limits = packageLimits();
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

let cached: Json | undefined;

/** The package's OpenAPI document, built once per process (its inputs never change) with the given server; shared, so
 * read-only. */
export function openApiDocument(serverUrl: string = DEFAULT_SERVER_URL): Json {
  cached ??= buildOpenApi(packageInput());
  return { ...cached, servers: serversFor(serverUrl) };
}

/** The document as pretty-printed JSON text, ending in a newline. */
export const openApiText = (serverUrl?: string): string => `${JSON.stringify(openApiDocument(serverUrl), null, 2)}\n`;
