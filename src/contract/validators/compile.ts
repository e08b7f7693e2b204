import type { Ajv2020 as Ajv2020Class, Options } from 'ajv/dist/2020.js';
import type { Plugin } from 'ajv';
import type * as Codegen from 'ajv/dist/compile/codegen/index.js';
import { requireCjs } from '../../lib/require.js';
import { CUSTOM_FORMATS } from './formats.js';
import { AJV_OPTIONS, EXTENSION_KEYWORDS, type SchemaVariant } from './sources.js';

// Ajv is loaded on demand: a server started from a build with generated validators never needs it,
// and importing it costs a tenth of a second.

/** A fresh Ajv with the project's options and formats; `source` keeps the generated code for standalone output. */
function newAjv(allErrors: boolean, validateSchema: boolean, source = false): Ajv2020Class {
  const { Ajv2020 } = requireCjs('ajv/dist/2020') as { Ajv2020: new (o: Options) => Ajv2020Class };
  const addFormats = requireCjs('ajv-formats') as Plugin<unknown>;
  const { _ } = requireCjs('ajv/dist/compile/codegen') as typeof Codegen;
  // Generated code reads formats from this name (not from a require of ajv-formats): see generate.ts.
  const code = source ? { code: { source: true, formats: _`__formats` } } : {};
  const ajv = new Ajv2020({ ...AJV_OPTIONS, allErrors, validateSchema, ...code });
  addFormats(ajv);
  for (const [name, format] of Object.entries(CUSTOM_FORMATS)) ajv.addFormat(name, format);
  for (const keyword of EXTENSION_KEYWORDS) ajv.addKeyword(keyword); // annotations: no validation code
  return ajv;
}

/** Both Ajv instances with every variant added (each checked against the meta-schema once). */
export function compilers(
  variants: readonly SchemaVariant[],
  source = false,
): { all: Ajv2020Class; first: Ajv2020Class } {
  const all = newAjv(true, true, source);
  // The first instance already checked every schema against the meta-schema.
  const first = newAjv(false, false, source);
  for (const v of variants) {
    all.addSchema(v.schema); // throws on a duplicate $id, and on a schema that breaks the meta-schema
    first.addSchema(v.schema); // request schemas may refer to others
  }
  return { all, first };
}
