import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { requireCjs } from '../../lib/require.js';
import { join } from 'node:path';

/** Base of every schema `$id`. */
export const SCHEMA_BASE = 'https://unified-ai-mock.dev/schemas/';

/** The `$id` of a schema file in schemas/. */
export const schemaId = (file: string): string => SCHEMA_BASE + file;

/** The `$id` of the strict variant of a request schema (unknown fields rejected). */
/**
 * Parts of schemas the mock checks values against by themselves at run time (`id#/pointer`): the build generates
 * their validators with the schemas', since compiling one on its first use compiled every schema (half a second of
 * the event loop, on the first latency change).
 */
export const SUBSCHEMA_IDS = {
  /** The profiles of a latency change, each checked as the catalogue checks its own. */
  latencyProfiles: `${SCHEMA_BASE}catalogue.json#/properties/profiles`,
} as const;

export const strictId = (id: string): string => id.replace(/\.json$/, '.strict.json');

/** True for the `$id` of a strict variant. */
export const isStrictId = (id: string): boolean => id.endsWith('.strict.json');

/** The Ajv options of every validator, compiled at start-up or generated at build time alike. */
export const AJV_OPTIONS = { verbose: true, strict: true, strictRequired: false, allowUnionTypes: true } as const;

/**
 * Keywords of our own that schemas may carry as annotations (strict mode rejects unknown ones): `x-flag`
 * names the command-line flag of a config.json field, `x-short` its one-letter form, `x-help` its one sentence in
 * `serve --help` and `x-group` the heading it is listed under (the serve command builds its flags and help from them);
 * `x-rule` says a `pattern` in words, for the messages of a bad configuration or rules file.
 */
export const EXTENSION_KEYWORDS = ['x-flag', 'x-short', 'x-help', 'x-group', 'x-rule'] as const;

/** One schema the registry serves: a file of schemas/, or the strict variant of a request schema. */
export interface SchemaVariant {
  readonly id: string;
  readonly schema: { $id: string };
  /** A request schema (or its strict variant): it also gets a validator that stops at the first error. */
  readonly request: boolean;
}

/** The schemas of a folder, and a hash of everything their validators are generated from. */
interface SchemaSources {
  readonly variants: readonly SchemaVariant[];
  readonly hash: string;
}

// Subschemas that test a condition rather than describe the body: closing them would change the
// condition (an `if` with `additionalProperties: false` never holds, so its `then` never applies).
const CONDITIONS = new Set(['if', 'not', 'contains', 'propertyNames']);

/** Adds `additionalProperties: false` to every object schema that lists its properties. */
function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node))
    out[k] = k === 'properties' ? mapValues(v as object, closeObjects) : CONDITIONS.has(k) ? v : closeObjects(v);
  if ('properties' in out && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

const mapValues = (o: object, f: (v: unknown) => unknown) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

// Bumped when the generated module's layout changes, so an older build's module is not used.
const LAYOUT = 1;
const versionOf = (pkg: string) => (requireCjs(`${pkg}/package.json`) as { version: string }).version;

/**
 * Reads every schema of `dir`, checks that each `$id` is its file's (so no two are alike), and adds the
 * strict variant of each request schema. The hash covers the files, the Ajv options and versions and the
 * strict transform: validators generated from other inputs must not be used for these.
 */
export function readSchemas(dir: string): SchemaSources {
  const hash = createHash('sha256').update(
    JSON.stringify([
      LAYOUT,
      AJV_OPTIONS,
      EXTENSION_KEYWORDS,
      versionOf('ajv'),
      versionOf('ajv-formats'),
      closeObjects.toString(),
    ]),
  );
  const variants: SchemaVariant[] = [];
  const seen = new Set<string>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const text = readFileSync(join(dir, file), 'utf8');
    hash.update(`\0${file}\0${text}`);
    const schema = JSON.parse(text) as { $id?: string };
    if (schema.$id !== schemaId(file))
      throw new Error(`schemas/${file}: $id must be ${schemaId(file)}, found ${schema.$id}`);
    const request = file.endsWith('-request.json');
    const found: SchemaVariant[] = [{ id: schema.$id, schema: schema as { $id: string }, request }];
    if (request)
      found.push({
        id: strictId(schema.$id),
        schema: { ...(closeObjects(schema) as object), $id: strictId(schema.$id) },
        request,
      });
    for (const v of found) {
      // A file named like a strict variant would otherwise shadow it.
      if (seen.has(v.id)) throw new Error(`schemas/${file}: duplicate $id ${v.id}`);
      seen.add(v.id);
      variants.push(v);
    }
  }
  return { variants, hash: hash.digest('hex') };
}
