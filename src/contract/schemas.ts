import type { ErrorObject, ValidateFunction } from 'ajv';
import { SCHEMAS_DIR } from '../lib/paths.js';
import { compilers } from './validators/compile.js';
import { GENERATED_FILE, loadGenerated, type Lookup } from './validators/generated.js';
import { readSchemas, type SchemaVariant } from './validators/sources.js';

export { base64Offset, base64Start } from './validators/formats.js';
export { SCHEMA_BASE, schemaId, strictId, SUBSCHEMA_IDS } from './validators/sources.js';

// Ready at start-up: what every start and every request needs. Response schemas (read by tests and
// the conformance runner), the conformance case schema and the strict variants (createApp prepares
// them when --strict is on) are compiled, or their generated group built, on their first use.
const EAGER = /-request\.json$|\/(config|catalogue|limits|reply-rules|fault-rule)\.json$/;
const REQUEST = /-request(\.strict)?\.json$/;

let shared: SchemaRegistry | undefined;

/** Compiles every variant with Ajv: each schema is checked against the meta-schema, validators on first use. */
function compiled(variants: readonly SchemaVariant[]): Lookup {
  const { all, first } = compilers(variants);
  return (allErrors, id) => (allErrors ? all : first).getSchema(id);
}

/**
 * Every schema of schemas/ and the strict variant of each request schema, by `$id`. A built server
 * loads the validators the build generated from these very files (see validators/generate.ts); otherwise,
 * or when the files changed since, they are compiled here. A bad or duplicate `$id` fails either way.
 */
export class SchemaRegistry {
  readonly ids: readonly string[];
  /** True when the validators come from the build's generated module rather than from Ajv at start-up. */
  readonly generated: boolean;
  private readonly lookup: Lookup;

  /** The registry of the package's schemas/, built once per process: it never changes after start-up. */
  static shared(): SchemaRegistry {
    return (shared ??= new SchemaRegistry());
  }

  /**
   * `generatedFile`: where to look for generated validators (by default the build's, for the package's schemas only).
   */
  constructor(
    dir: string = SCHEMAS_DIR,
    generatedFile: string | undefined = dir === SCHEMAS_DIR ? GENERATED_FILE : undefined,
  ) {
    const { variants, hash } = readSchemas(dir);
    this.ids = variants.map((v) => v.id);
    const loaded =
      generatedFile === undefined
        ? undefined
        : loadGenerated(hash, new Map(variants.map((v) => [v.id, v.schema])), generatedFile);
    this.generated = loaded !== undefined;
    // An id the module has no validator for (a subschema such as `x.json#/$defs/y`) is compiled on its first use.
    let fallback: Lookup | undefined;
    this.lookup = loaded
      ? (allErrors, id) => loaded(allErrors, id) ?? (fallback ??= compiled(variants))(allErrors, id)
      : compiled(variants);
    this.prepare(this.ids.filter((id) => EAGER.test(id)));
  }

  /** Compiles these schemas now (both request validators for request schemas), so no request pays for it. */
  prepare(ids: readonly string[]): void {
    for (const id of ids) {
      this.get(id);
      if (REQUEST.test(id)) this.first(id);
    }
  }

  /** The validator of a schema; throws for an unknown id (a start-up error). */
  get(id: string): ValidateFunction {
    const fn = this.lookup(true, id);
    if (!fn) throw new Error(`No schema with $id ${id}`);
    return fn;
  }

  private first(id: string): ValidateFunction {
    const fn = REQUEST.test(id) ? this.lookup(false, id) : undefined;
    if (!fn) throw new Error(`No request schema with $id ${id}`);
    return fn;
  }

  /** Validates a value; returns Ajv's errors (empty when valid). */
  check(id: string, value: unknown): ErrorObject[] {
    const fn = this.get(id);
    return fn(value) ? [] : [...(fn.errors ?? [])];
  }

  /** Validates a value against a request schema, stopping at its first error (one error at most). */
  checkFirst(id: string, value: unknown): ErrorObject[] {
    const fn = this.first(id);
    return fn(value) ? [] : [...(fn.errors ?? [])];
  }
}
