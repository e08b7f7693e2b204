import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

// ajv-formats is CommonJS; its plugin is the module's `default` export under NodeNext.
const addFormats = formats.default;
import { isBase64 } from './media/base64.js';
import { SCHEMAS_DIR } from './paths.js';

/** Base of every schema `$id`. */
export const SCHEMA_BASE = 'https://unified-ai-mock.dev/schemas/';

/** The `$id` of a schema file in schemas/. */
export const schemaId = (file: string): string => SCHEMA_BASE + file;

/** The `$id` of the strict variant of a request schema (unknown fields rejected). */
export const strictId = (id: string): string => id.replace(/\.json$/, '.strict.json');

const DATA_URI_PREFIX = /^data:[\w.+-]+\/[\w.+-]+(;[\w.+-]+=[\w.+-]+)*;base64,/;

/** Splits a base64 or data-URI string into its base64 payload offset; undefined if it is neither. */
export function base64Start(value: string): number | undefined {
  let start = 0;
  if (value.startsWith('data:')) {
    const prefix = DATA_URI_PREFIX.exec(value.slice(0, 256));
    if (!prefix) return undefined;
    start = prefix[0].length;
  }
  return isBase64(value, start) ? start : undefined;
}

// Subschemas that test a condition rather than describe the body: closing them would change the
// condition (an `if` with `additionalProperties: false` never holds, so its `then` never applies).
const CONDITIONS = new Set(['if', 'not', 'contains', 'propertyNames']);

/** Adds `additionalProperties: false` to every object schema that lists its properties. */
function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = k === 'properties' ? mapValues(v as object, closeObjects) : CONDITIONS.has(k) ? v : closeObjects(v);
  if ('properties' in out && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

const mapValues = (o: object, f: (v: unknown) => unknown) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

// Compiled at start-up: what every start and every request needs. Response schemas (read by tests and
// the conformance runner), the conformance case schema and the strict variants (createApp prepares
// them when --strict is on) are compiled on their first use instead, which halves start-up time.
const EAGER = /-request\.json$|^(config|catalogue|reply-rules|fault-rule)\.json$/;

let shared: SchemaRegistry | undefined;

/** Every schema of schemas/, added to one Ajv instance at start-up (a bad or duplicate `$id` fails there). */
export class SchemaRegistry {
  readonly ajv: Ajv2020;
  readonly ids: readonly string[];
  /** The request schemas again, stopping at the first error: bounded work for a body however broken. */
  private readonly firstError: Ajv2020;

  /** The registry of the package's schemas/, built once per process: it never changes after start-up. */
  static shared(): SchemaRegistry {
    return (shared ??= new SchemaRegistry());
  }

  constructor(dir: string = SCHEMAS_DIR) {
    this.ajv = newAjv(true, true);
    // The first instance already checked every schema against the meta-schema.
    this.firstError = newAjv(false, false);
    const ids: string[] = [];
    const eager: string[] = [];
    const requestIds: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
      const schema = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { $id?: string };
      if (schema.$id !== schemaId(file)) throw new Error(`schemas/${file}: $id must be ${schemaId(file)}, found ${schema.$id}`);
      const isRequest = file.endsWith('-request.json');
      const variants = [schema, ...(isRequest ? [{ ...(closeObjects(schema) as object), $id: strictId(schema.$id) }] : [])];
      for (const v of variants) {
        this.ajv.addSchema(v); // throws on a duplicate $id, and on a schema that breaks the meta-schema
        this.firstError.addSchema(v); // request schemas may refer to others
        ids.push(v.$id!);
      }
      if (EAGER.test(file)) eager.push(schema.$id);
      if (isRequest) requestIds.push(schema.$id);
    }
    this.ids = ids;
    this.prepare(eager);
    for (const id of requestIds) this.firstError.getSchema(id);
  }

  /** Compiles these schemas now (both request validators for request schemas), so no request pays for it. */
  prepare(ids: readonly string[]): void {
    for (const id of ids) {
      this.get(id);
      if (/-request(\.strict)?\.json$/.test(id)) this.firstError.getSchema(id);
    }
  }

  /** The compiled validator of a schema; throws for an unknown id (a start-up error). */
  get(id: string): ValidateFunction {
    const fn = this.ajv.getSchema(id);
    if (!fn) throw new Error(`No schema with $id ${id}`);
    return fn;
  }

  /** Validates a value; returns Ajv's errors (empty when valid). */
  check(id: string, value: unknown): ErrorObject[] {
    const fn = this.get(id);
    return fn(value) ? [] : [...(fn.errors ?? [])];
  }

  /** Validates a value against a request schema, stopping at its first error (one error at most). */
  checkFirst(id: string, value: unknown): ErrorObject[] {
    const fn = this.firstError.getSchema(id);
    if (!fn) throw new Error(`No request schema with $id ${id}`);
    return fn(value) ? [] : [...(fn.errors ?? [])];
  }
}

function newAjv(allErrors: boolean, validateSchema: boolean): Ajv2020 {
  const ajv = new Ajv2020({ allErrors, validateSchema, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addFormat('base64-image', { type: 'string', validate: (s: string) => base64Start(s) !== undefined });
  return ajv;
}
