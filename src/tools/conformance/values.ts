/** Values the boundary generator puts in bodies: wrong types, just-outside numbers, long strings. */

/** A JSON Schema node as the generator reads it. */
export interface SchemaNode {
  type?: string | string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  pattern?: string;
  format?: string;
  required?: string[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}

const JSON_TYPE = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'array'
      : typeof v === 'number'
        ? Number.isInteger(v)
          ? 'integer'
          : 'number'
        : typeof v;

// Per expected type, a value no common validator coerces into it (lax modes turn "1.5" into a number
// and "yes" into true, so neither is used): the first wrong type a field is tried with.
const WRONG: Record<string, unknown> = {
  string: 12345,
  number: 'not-a-number',
  integer: 'not-a-number',
  boolean: 'not-a-boolean',
  array: 'not-an-array',
  object: 'not-an-object',
};

/** The JSON types a node allows: its `type`, or for an enum without one, the types of its values. */
export function allowedTypes(node: SchemaNode): string[] {
  if (node.type) return [node.type].flat();
  return [...new Set((node.enum ?? []).map((v) => (JSON_TYPE(v) === 'integer' ? 'number' : JSON_TYPE(v))))];
}

const accepts = (allowed: readonly string[], v: unknown): boolean =>
  allowed.includes(JSON_TYPE(v)) || (JSON_TYPE(v) === 'integer' && allowed.includes('number'));

/** A value of a JSON type the schema node does not allow. */
export function wrongType(node: SchemaNode): unknown {
  const allowed = allowedTypes(node);
  return [WRONG[allowed[0] ?? ''], ...Object.values(WRONG), null].find((v) => v !== undefined && !accepts(allowed, v));
}

/** An allowed value of a node, for its string form: the base value, an enum member, or a number inside its range. */
function sampleOf(node: SchemaNode, baseValue: unknown): unknown {
  if (baseValue !== undefined && typeof baseValue !== 'object') return baseValue;
  if (node.enum?.length) return node.enum[0];
  const types = allowedTypes(node);
  if (types.includes('boolean')) return true;
  if (types.includes('number') || types.includes('integer'))
    return node.minimum ?? (node.maximum !== undefined ? Math.min(node.maximum, 1) : 1);
  return undefined;
}

/**
 * Every wrong JSON type for a node, each as a value a hurried implementation might let through: a
 * plain string, the string form of an allowed number or boolean ("0.5", "true": what lax parsers
 * coerce), a number, a boolean, null, an object and an array. The first is `wrongType`'s value, under
 * the kind `wrong-type`; the others have kinds of their own.
 */
export function wrongTypes(node: SchemaNode, baseValue: unknown): { kind: string; value: unknown }[] {
  const allowed = allowedTypes(node);
  if (!allowed.length) return [];
  const sample = sampleOf(node, baseValue);
  const candidates: { kind: string; value: unknown }[] = [
    { kind: 'wrong-type', value: wrongType(node) },
    { kind: 'wrong-type-string', value: 'not-a-value' },
    ...(typeof sample === 'number' || typeof sample === 'boolean'
      ? [{ kind: 'wrong-type-string-form', value: String(sample) }]
      : []),
    { kind: 'wrong-type-number', value: allowed.includes('boolean') ? 1 : 12345 },
    { kind: 'wrong-type-boolean', value: true },
    { kind: 'wrong-type-null', value: null },
    { kind: 'wrong-type-object', value: {} },
    { kind: 'wrong-type-array', value: sample === undefined ? [] : [sample] },
  ];
  // One value per JSON type; the string form of an allowed value is a kind of its own.
  const seen = new Set<string>();
  return candidates.filter((c) => {
    if (c.value === undefined || accepts(allowed, c.value)) return false;
    const key = c.kind === 'wrong-type-string-form' ? c.kind : JSON_TYPE(c.value);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The first allowed type of a node. */
export const primaryType = (node: SchemaNode): string | undefined => [node.type ?? []].flat()[0];

/**
 * How far outside a numeric limit a "just outside" value lies: 1 for integers, else two decimal
 * places below the span of the range (0..2 -> 0.01, -50..50 -> 1), so the value is plainly outside
 * yet close to the limit.
 */
export function step(node: SchemaNode): number {
  if (primaryType(node) === 'integer') return 1;
  const span =
    node.minimum !== undefined && node.maximum !== undefined
      ? node.maximum - node.minimum
      : Math.abs(node.maximum ?? node.minimum ?? 1) || 1;
  return 10 ** (Math.floor(Math.log10(span)) - 2);
}

/** a + b without binary fractions showing (2 + 0.01 is 2.01, not 2.0100000000000002). */
export const add = (a: number, b: number): number => Number((a + b).toPrecision(12));

/** A readable string of exactly n characters. */
// Characters outside ASCII (é is two bytes in UTF-8, ’ three) so that a server counting bytes rather
// than characters refuses a text of exactly the maximum: the API document counts characters.
const FILLER = 'A café’s red dot on a white background. ';

/** A readable string of exactly n characters (code points), with some that take more than one byte. */
export const filler = (n: number): string => FILLER.repeat(Math.ceil(n / FILLER.length) + 1).slice(0, n);

/** A number inside a node's range that is not an integer: what a server that reads integers only refuses. */
export function fraction(node: SchemaNode): number | undefined {
  if (primaryType(node) !== 'number') return undefined;
  const lo = node.minimum ?? (node.maximum !== undefined ? node.maximum - 2 : 0);
  const hi = node.maximum ?? lo + 2;
  const v = add(lo, (hi - lo) / 4);
  return Number.isInteger(v) ? add(v, 0.5) : v;
}

/** A value not in an enum: the next integer after the smallest number, or a plainly invalid string. */
export function outsideEnum(values: readonly unknown[]): unknown {
  const numbers = values.filter((v): v is number => typeof v === 'number');
  if (numbers.length === values.length && numbers.length) {
    let v = Math.min(...numbers) + 1;
    while (numbers.includes(v)) v++;
    return v;
  }
  return 'conformance-invalid-value';
}

/** A string that breaks a format the mock checks. */
export const badFormat = (format: string): string => (format === 'uri' ? 'not a url' : '%%% not base64 %%%');

/** A string that does not match a pattern. */
export function patternMismatch(pattern: string): string | undefined {
  const re = new RegExp(pattern, 'u');
  return ['Not A Valid Value!', '', '0'].find((s) => !re.test(s));
}

/** A case id segment for a value: lower case letters, digits, dash and underscore only. */
export const slug = (value: unknown): string =>
  String(value)
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-');
