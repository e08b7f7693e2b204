import type { Model } from '../../domain/catalogue.js';
import type { FaultBounds } from '../../domain/faults/kinds.js';
import type { ErrorTemplate } from '../../contract/errors.js';
import type { Operation } from '../../contract/operations.js';
import { componentName, componentSchemas, type Json } from './components.js';
import { TAGS } from './describe.js';
import { errorComponents, headerComponents } from './errorResponses.js';
import { operationObject } from './operation.js';
import { openApiPath, parameterComponents, securitySchemes } from './parameters.js';

/** Everything the document is made from; the same input always gives the same document. */
export interface OpenApiInput {
  readonly operations: readonly Operation[];
  /** Every schema of schemas/, by `$id`. */
  readonly schemas: ReadonlyMap<string, Json>;
  readonly errors: Readonly<Record<string, ErrorTemplate>>;
  /** The `$id`s of the error envelope and of one streamed chat chunk. */
  readonly errorSchema: string;
  readonly chunkSchema: string;
  readonly version: string;
  readonly license: string;
  readonly models: readonly Model[];
  readonly voices: readonly { readonly id: string }[];
  readonly outputFormats: readonly string[];
  readonly defaultOutputFormat: string;
  /** The bounds of the fault directives (fixtures/limits.json), for X-Mock-Fault's and Prefer's words. */
  readonly faultBounds: FaultBounds;
}

/** The URL the document names as its server when it is not fetched from a running mock. */
export const DEFAULT_SERVER_URL = 'http://127.0.0.1:4010';

const DESCRIPTION = `The Unified AI Model Service API as served by unified-ai-mock, generated from the mock's operations table and the JSON Schemas it validates requests with, so every limit here is the limit the mock enforces.

- **Paths** are served as the API document writes them and also under a \`/v1\` prefix (the document leaves versioning open), except paths that start with \`/v1\` or \`/__\`. Each operation lists every path it answers on in \`x-unified-ai-mock.paths\`.
- **Errors** share one envelope, \`{"error": {"message", "type", "param", "code"}}\` (the Error schema), on every status. A path the mock does not serve is a 404 (NotFound), a method a path does not accept a 405 (MethodNotAllowed).
- **Extensions**: every operation carries \`x-unified-ai-mock: {operation, extension, paths}\`; \`extension: true\` marks what the API document does not list (the model list, task polling, media downloads, the admin API, this document, the health check), and the control headers and security scheme that are the mock's own carry \`x-unified-ai-mock: {extension: true}\` too. \`operation\` is the id used in fault rules and the request journal.
- **Control headers** (\`X-Mock-Fault\`, \`Prefer\`, \`X-Mock-Pacing\`, \`X-Mock-Reply-Rule\`) inject faults, pace streams and pick replies; \`--no-fault-headers\` turns them off.`;

/** The `servers` list: the given base URL. */
export const serversFor = (url: string): Json[] => [
  { url, description: 'The mock (paths also answer under /v1, see the description).' },
];

/** Builds the OpenAPI 3.1 document of the operations table (pure: no I/O, stable key order). */
export function buildOpenApi(input: OpenApiInput, serverUrl: string = DEFAULT_SERVER_URL): Json {
  const ctx = { models: input.models, voices: input.voices, chunkSchema: input.chunkSchema };
  const paths: Record<string, Json> = {};
  for (const op of input.operations) {
    const path = openApiPath(op.path);
    const item = (paths[path] ??= {});
    const method = op.method.toLowerCase();
    if (item[method]) throw new Error(`Two operations for ${op.method} ${op.path}`);
    item[method] = operationObject(op, ctx);
  }
  const roots = [
    ...input.operations.flatMap((op) =>
      [op.requestSchema, op.success.schema].filter((id): id is string => id !== undefined),
    ),
    input.chunkSchema,
    input.errorSchema,
  ];
  if (componentName(input.errorSchema) !== 'Error')
    throw new Error(`The error schema must be named Error, not ${componentName(input.errorSchema)}`);
  const errors = errorComponents(input.errors);
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Unified AI Model Service API (unified-ai-mock)',
      version: input.version,
      description: DESCRIPTION,
      license: { name: input.license, identifier: input.license },
    },
    servers: serversFor(serverUrl),
    tags: TAGS.map((t) => ({
      name: t.name,
      description: t.description,
      ...(t.extension ? { 'x-unified-ai-mock': { extension: true } } : {}),
    })),
    paths,
    components: {
      schemas: componentSchemas(roots, input.schemas),
      responses: errors.responses,
      parameters: parameterComponents(input.outputFormats, input.defaultOutputFormat, input.faultBounds),
      examples: errors.examples,
      headers: headerComponents(),
      securitySchemes: securitySchemes(),
    },
  };
}
