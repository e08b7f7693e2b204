// Valid values for a JSON Schema (the subset schemas/*-request.json use), as fast-check arbitraries.
import fc from 'fast-check';

/** The JSON Schema keywords the request schemas use. */
export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  if?: Schema;
  then?: Schema;
}

/** Arbitraries for fields whose valid values come from the catalogue, by dotted path (messages[].role). */
export type Overrides = Record<string, fc.Arbitrary<unknown>>;

// Code points that break naive string handling: NUL, BOM, zero-width and direction marks, lone
// surrogates, a combining accent, an astral emoji, line and paragraph separators, a noncharacter.
const EDGE = [
  '\u0000',
  '\uFEFF',
  '\u200B',
  '\u202E',
  '\uD800',
  '\uDFFF',
  'e\u0301',
  '\u{1F600}',
  '\u2028',
  '\u2029',
  '\uFFFF',
  '"',
  '\\',
  '</script>',
  '%s',
  '${x}',
];

/** Text with unicode edge cases mixed in: arbitrary code points, graphemes and the EDGE list. */
export function unicodeText(minLength = 0, maxLength = 40): fc.Arbitrary<string> {
  const unit = fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: fc.constantFrom(...EDGE.filter((e) => [...e].length === 1)) },
  );
  return fc.array(unit, { minLength, maxLength: Math.max(minLength, maxLength) }).map((parts) => parts.join(''));
}

const typesOf = (s: Schema): string[] => (s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type]);

/** An arbitrary of values valid for `schema`; `path` names the value for the overrides. */
export function validArbitrary(schema: Schema, overrides: Overrides = {}, path = ''): fc.Arbitrary<unknown> {
  const override = overrides[path];
  if (override) return override;
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const [type] = typesOf(schema);
  switch (type) {
    case 'string':
      return stringArbitrary(schema);
    case 'integer':
      return schema.minimum === undefined && schema.maximum === undefined
        ? fc.oneof(fc.integer(), fc.maxSafeInteger())
        : fc.integer({
            min: schema.minimum ?? Number.MIN_SAFE_INTEGER,
            max: schema.maximum ?? Number.MAX_SAFE_INTEGER,
          });
    case 'number':
      return fc
        .double({ min: schema.minimum, max: schema.maximum, noNaN: true, noDefaultInfinity: true })
        .map((n) => (Object.is(n, -0) ? 0 : n));
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const minLength = schema.minItems ?? 0;
      return fc.array(validArbitrary(schema.items ?? {}, overrides, `${path}[]`), {
        minLength,
        maxLength: Math.min(schema.maxItems ?? Infinity, minLength + 4),
      });
    }
    case 'object':
      return objectArbitrary(schema, overrides, path);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? min + 40;
  if (schema.pattern)
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => [...s].length >= min && [...s].length <= max);
  if (schema.format === 'uri') return fc.webUrl();
  // Mostly short strings, sometimes right at the maximum length.
  return fc.oneof(
    { weight: 9, arbitrary: unicodeText(min, Math.min(max, min + 40)) },
    { weight: 1, arbitrary: unicodeText(max, max) },
  );
}

function objectArbitrary(schema: Schema, overrides: Overrides, path: string): fc.Arbitrary<Record<string, unknown>> {
  const props = schema.properties ?? {};
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, sub] of Object.entries(props))
    model[key] = validArbitrary(sub, overrides, path ? `${path}.${key}` : key);
  const base = fc.record(model, { requiredKeys: (schema.required ?? []).filter((k) => k in props) });
  if (!schema.if || !schema.then) return base as fc.Arbitrary<Record<string, unknown>>;
  // if/then: when the condition holds, the fields `then` requires are generated too.
  const cond = schema.if;
  const needed = schema.then.required ?? [];
  return base.chain((value) => {
    const holds = Object.entries(cond.properties ?? {}).every(
      ([k, s]) => s.const === undefined || (value as Record<string, unknown>)[k] === s.const,
    );
    const missing = holds ? needed.filter((k) => !(k in value)) : [];
    if (!missing.length) return fc.constant(value as Record<string, unknown>);
    const extra: Record<string, fc.Arbitrary<unknown>> = {};
    for (const k of missing) extra[k] = validArbitrary(props[k] ?? {}, overrides, path ? `${path}.${k}` : k);
    return fc.record(extra).map((more) => ({ ...value, ...more }));
  });
}
