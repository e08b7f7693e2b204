// Broken request bodies made from valid ones: each mutation is one way a client gets a body wrong.
import fc from 'fast-check';
import { unicodeText, type Schema } from './schemaArbitrary.js';

/** A body to send, as raw text, and what was done to it. */
export interface Mutated {
  readonly kind: string;
  readonly path: string;
  readonly text: string;
  /** False when only the strict schemas reject it (an unknown field). */
  readonly lenientRejects: boolean;
}

type Path = (string | number)[];
interface Target {
  readonly path: Path;
  readonly schema: Schema;
}

const PLACEHOLDER = '"@@mutation-placeholder@@"';
const show = (p: Path) =>
  p
    .map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`))
    .join('')
    .replace(/^\./, '') || '(body)';

/** Every place in `value` that the schema describes, outermost first. */
function targets(schema: Schema, value: unknown, path: Path = []): Target[] {
  const out: Target[] = [];
  if (schema.properties && value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, sub] of Object.entries(schema.properties)) {
      if (!(k in (value as object))) continue;
      out.push(
        { path: [...path, k], schema: sub },
        ...targets(sub, (value as Record<string, unknown>)[k], [...path, k]),
      );
    }
  }
  if (schema.items && Array.isArray(value) && value.length)
    out.push({ path: [...path, 0], schema: schema.items }, ...targets(schema.items, value[0], [...path, 0]));
  return out;
}

/** Objects (with their schema) whose required fields can be taken away. */
function requiredSites(schema: Schema, value: unknown, path: Path = []): { path: Path; key: string }[] {
  const here = (schema.required ?? [])
    .filter((k) => value && typeof value === 'object' && k in (value as object))
    .map((key) => ({ path, key }));
  return [
    ...here,
    ...targets(schema, value, path)
      .flatMap((t) => requiredSites(t.schema, get(value, t.path.slice(path.length)), t.path))
      .filter((s) => s.path.length > path.length),
  ];
}

const get = (v: unknown, p: Path): unknown =>
  p.reduce<unknown>((o, k) => (o as Record<string | number, unknown>)?.[k], v);
const clone = <T>(v: T): T => structuredClone(v);

function withValue(body: Record<string, unknown>, path: Path, value: unknown): Record<string, unknown> {
  const out = clone(body);
  const parent = get(out, path.slice(0, -1)) as Record<string | number, unknown>;
  parent[path[path.length - 1]!] = value;
  return out;
}

/** The body's text with the value at `path` replaced by raw JSON text (too deep or big to build as objects). */
function withRaw(body: Record<string, unknown>, path: Path, raw: string): string {
  return JSON.stringify(withValue(body, path, JSON.parse(PLACEHOLDER))).replace(PLACEHOLDER, () => raw);
}

const WRONG_VALUES: unknown[] = [null, true, false, 0, -1, 1.5, 1e308, '', 'text', '12', [], [1], ['a'], {}, { a: 1 }];

/** Values of a wrong type (or outside an enum) for a field. */
function wrongValue(schema: Schema): fc.Arbitrary<unknown> {
  const extra: unknown[] = [];
  if (schema.enum)
    extra.push(...schema.enum.map((v) => (typeof v === 'string' ? v.toUpperCase() + '\u200B' : String(v))));
  if (schema.type === 'integer') extra.push(0.5, 2.5);
  return fc.constantFrom(...WRONG_VALUES, ...extra);
}

/** Mutations that apply to one field, by what its schema constrains. */
function fieldMutations(body: Record<string, unknown>, t: Target): fc.Arbitrary<Mutated>[] {
  const s = t.schema;
  const path = show(t.path);
  const value = (kind: string, a: fc.Arbitrary<unknown>): fc.Arbitrary<Mutated> =>
    a.map((v) => ({ kind, path, text: JSON.stringify(withValue(body, t.path, v)), lenientRejects: true }));
  const raw = (kind: string, a: fc.Arbitrary<string>): fc.Arbitrary<Mutated> =>
    a.map((r) => ({ kind, path, text: withRaw(body, t.path, r), lenientRejects: true }));
  const out = [
    value('wrong type', wrongValue(s)),
    value('null', fc.constant(null)),
    raw(
      'deep nesting',
      fc
        .tuple(fc.integer({ min: 64, max: 20_000 }), fc.boolean())
        .map(([n, arr]) => (arr ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n))),
    ),
    raw(
      'huge array',
      fc.integer({ min: 1000, max: 5000 }).map((n) => `[${'1,'.repeat(n - 1)}1]`),
    ),
  ];
  if (s.minimum !== undefined)
    out.push(
      value(
        'below minimum',
        fc.double({ min: 1e-6, max: 1e9, noNaN: true }).map((d) => s.minimum! - d),
      ),
    );
  if (s.maximum !== undefined)
    out.push(
      value(
        'above maximum',
        fc.double({ min: 1e-6, max: 1e9, noNaN: true }).map((d) => s.maximum! + d),
      ),
    );
  if (s.maxLength !== undefined)
    out.push(
      value(
        'over-long string',
        fc.tuple(unicodeText(1, 1), fc.integer({ min: 1, max: 200 })).map(([c, n]) => c.repeat(s.maxLength! + n)),
      ),
    );
  if (s.minLength) out.push(value('too-short string', fc.constant('')));
  if (s.pattern || s.enum) {
    const v = String(get(body, t.path));
    out.push(
      value(
        'look-alike value',
        fc.constantFrom(
          `${v}\n`,
          ` ${v}`,
          `${v}\u200B`,
          v.replace(/[a-e]/, (c) => String.fromCharCode(c.charCodeAt(0) + 0x3d0)),
          `${v}\u0000`,
          v.toUpperCase() === v ? `${v}x!` : v.toUpperCase(),
        ),
      ),
    );
  }
  return out;
}

/** The keys no body may hold at any depth, however escaped (docs/reliability.md, "What each bad input gets"). */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Whether a JSON text holds one of PROTOTYPE_KEYS as a key, at any depth, as JSON.parse reads it. */
function hasPrototypeKey(text: string): boolean {
  let found = false;
  JSON.parse(text, (key, value: unknown) => {
    if (PROTOTYPE_KEYS.has(key)) found = true;
    return value;
  });
  return found;
}

/** Mutations of the whole body: missing fields, unknown fields, prototype keys, broken JSON, not an object. */
function bodyMutations(schema: Schema, body: Record<string, unknown>): fc.Arbitrary<Mutated>[] {
  const text = JSON.stringify(body);
  const out: fc.Arbitrary<Mutated>[] = [
    fc
      .constantFrom('null', '[]', '"text"', '42', 'true', `[${text}]`)
      .map((t) => ({ kind: 'not an object', path: '(body)', text: t, lenientRejects: true })),
    fc
      .oneof(
        fc.integer({ min: 1, max: text.length - 1 }).map((n) => text.slice(0, n)),
        fc.constantFrom(
          `${text},`,
          `${text}}`,
          text.replace('{', "{'x':1,"),
          text.replace(/}$/, ',}'),
          `// c\n${text}`,
          text.replace(/}$/, ',"n":NaN}'),
        ),
      )
      .map((t) => ({ kind: 'broken JSON', path: '(body)', text: t, lenientRejects: true })),
    fc.constantFrom('{"polluted":true}', '{"toString":1}', 'null').map((v) => ({
      kind: '__proto__ key',
      path: '__proto__',
      text: text.replace('{', `{"__proto__":${v},`),
      lenientRejects: true,
    })),
    fc
      .tuple(
        fc.oneof(
          fc.constantFrom('constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'prototype'),
          unicodeText(1, 12),
        ),
        fc.jsonValue({ maxDepth: 2 }),
      )
      .filter(([k]) => !(k in (schema.properties ?? {})) && k !== '__proto__')
      .map(([k, v]) => {
        const text = JSON.stringify({ ...body, [k]: v });
        // A key __proto__, constructor or prototype anywhere in the body is refused, in lenient mode too.
        return hasPrototypeKey(text)
          ? { kind: '__proto__ key', path: k, text, lenientRejects: true }
          : { kind: 'unknown field', path: k, text, lenientRejects: false };
      }),
  ];
  const sites = requiredSites(schema, body);
  if (sites.length) {
    out.push(
      fc.constantFrom(...sites).map(({ path, key }) => {
        const copy = clone(body);
        delete (get(copy, path) as Record<string, unknown>)[key];
        return {
          kind: 'missing required field',
          path: show([...path, key]),
          text: JSON.stringify(copy),
          lenientRejects: true,
        };
      }),
    );
  }
  return out;
}

// Kinds whose text the schema cannot judge: the JSON parser rejects them before validation.
const UNPARSED = new Set(['not an object', 'broken JSON', '__proto__ key']);

/**
 * One broken body made from a valid one: a field mutation, or a whole-body one. `rejects` is the
 * oracle (the request schema, strict for unknown fields): a mutation that happens to leave the body
 * valid, such as a "wrong" value the field accepts after all, is not generated.
 */
export function mutatedArbitrary(
  schema: Schema,
  valid: fc.Arbitrary<Record<string, unknown>>,
  rejects: (body: unknown, strict: boolean) => boolean,
): fc.Arbitrary<Mutated> {
  return valid
    .chain((body) => {
      const fields = targets(schema, body).flatMap((t) => fieldMutations(body, t));
      return fc.oneof(fc.oneof(...fields), fc.oneof(...bodyMutations(schema, body)));
    })
    .filter((m) => UNPARSED.has(m.kind) || rejects(JSON.parse(m.text), !m.lenientRejects))
    .map(printable);
}

// A counterexample of deep nesting is megabytes long: reports show its start and its length.
function printable(m: Mutated): Mutated {
  const text = m.text.length > 300 ? `${m.text.slice(0, 300)}... (${m.text.length} characters)` : m.text;
  return Object.assign(m, { [fc.toStringMethod]: () => `${m.kind} at ${m.path}: ${JSON.stringify(text)}` });
}
