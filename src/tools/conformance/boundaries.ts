import { clone, dotted, getAt, setAt, unsetAt } from '../../verdict/pointer.js';
import type { Case } from '../../verdict/types.js';
import {
  add,
  allowedTypes,
  badFormat,
  filler,
  fraction,
  outsideEnum,
  patternMismatch,
  primaryType,
  slug,
  step,
  wrongTypes,
  type SchemaNode,
} from './values.js';

/** Keywords at one pointer and the sentence of the API document they cite. */
interface Cited {
  readonly keywords: readonly string[];
  readonly rule: string;
}

/**
 * Where the API document states a schema rule (level must): the keywords it covers at one pointer, and
 * the citation; `should`, the keywords whose shape it only describes (level should).
 */
export type DocumentedRules = Readonly<Record<string, Cited & { readonly should?: Cited }>>;

/** What the generator needs for one operation. */
export interface GeneratorInput {
  readonly prefix: string;
  /** schemas/ file name, for citing rules the API document does not state. */
  readonly schemaFile: string;
  readonly schema: SchemaNode;
  /** The cheapest valid body, placeholders already filled. */
  readonly base: Record<string, unknown>;
  /** Valid values to add when a mutation makes another field required (e.g. image_url). */
  readonly samples: Readonly<Record<string, unknown>>;
  readonly documented: DocumentedRules;
  /** True when a body passes the operation's request schema. */
  readonly isValid: (body: unknown) => boolean;
}

/** A generated case before it is completed into a Case. */
export interface GeneratedCase extends Pick<Case, 'id' | 'description' | 'rule' | 'tags' | 'profile' | 'level'> {
  /** The JSON pointer of the field the case changes. */
  readonly pointer: string;
  readonly body: Record<string, unknown>;
  readonly status: 200 | 400;
}

type Mutation = { kind: string; keyword: string; category: string; set?: unknown; unset?: boolean; what: string };

/** The mutations of one schema node: just inside (valid) and just outside (invalid) every limit. */
function mutations(node: SchemaNode, required: boolean, baseValue: unknown): Mutation[] {
  const out: Mutation[] = [];
  const push = (m: Mutation) => out.push(m);
  if (required) push({ kind: 'missing', keyword: 'required', category: 'required', unset: true, what: 'is missing' });
  if (node.enum) {
    for (const v of node.enum)
      if (v !== baseValue)
        push({
          kind: `enum-${slug(v)}`,
          keyword: 'enum',
          category: 'enums',
          set: v,
          what: `${JSON.stringify(v)} (one of the allowed values)`,
        });
    const v = outsideEnum(node.enum);
    push({
      kind: 'not-in-enum',
      keyword: 'enum',
      category: 'enums',
      set: v,
      what: `${JSON.stringify(v)} (not one of ${node.enum.map((e) => JSON.stringify(e)).join(', ')})`,
    });
  }
  // Every JSON type the field must not take; on an enum without a type the enum is the rule broken.
  const types = allowedTypes(node).join(' or ');
  for (const { kind, value } of wrongTypes(node, baseValue)) {
    push({
      kind,
      keyword: node.type ? 'type' : 'enum',
      category: 'types',
      set: value,
      what: `${JSON.stringify(value)} (not ${node.type ? types : `one of the allowed ${types} values`})`,
    });
  }
  if (primaryType(node) === 'integer')
    push({ kind: 'not-integer', keyword: 'integer', category: 'types', set: 1.5, what: '1.5 (not an integer)' });
  const f = fraction(node);
  if (f !== undefined && f !== baseValue)
    push({
      kind: 'fraction',
      keyword: 'type',
      category: 'types',
      set: f,
      what: `${f} (a number that is not an integer)`,
    });
  const d = step(node);
  if (node.minimum !== undefined) {
    if (node.minimum !== baseValue)
      push({
        kind: 'at-minimum',
        keyword: 'minimum',
        category: 'limits',
        set: node.minimum,
        what: `${node.minimum} (the minimum)`,
      });
    push({
      kind: 'below-minimum',
      keyword: 'minimum',
      category: 'limits',
      set: add(node.minimum, -d),
      what: `${add(node.minimum, -d)} (just below the minimum ${node.minimum})`,
    });
  }
  if (node.maximum !== undefined) {
    if (node.maximum !== baseValue)
      push({
        kind: 'at-maximum',
        keyword: 'maximum',
        category: 'limits',
        set: node.maximum,
        what: `${node.maximum} (the maximum)`,
      });
    push({
      kind: 'above-maximum',
      keyword: 'maximum',
      category: 'limits',
      set: add(node.maximum, d),
      what: `${add(node.maximum, d)} (just above the maximum ${node.maximum})`,
    });
  }
  if (node.maxLength !== undefined) {
    push({
      kind: 'at-max-length',
      keyword: 'maxLength',
      category: 'limits',
      set: filler(node.maxLength),
      what: `${node.maxLength} characters (the maximum)`,
    });
    push({
      kind: 'above-max-length',
      keyword: 'maxLength',
      category: 'limits',
      set: filler(node.maxLength + 1),
      what: `${node.maxLength + 1} characters (one more than the maximum ${node.maxLength})`,
    });
  }
  if (node.minLength)
    push({
      kind: 'below-min-length',
      keyword: 'minLength',
      category: 'limits',
      set: filler(node.minLength - 1),
      what: `${node.minLength - 1} characters (below the minimum ${node.minLength})`,
    });
  if (node.minItems)
    push({
      kind: 'too-few-items',
      keyword: 'minItems',
      category: 'limits',
      set: [],
      what: `an empty array (at least ${node.minItems} item${node.minItems > 1 ? 's' : ''} needed)`,
    });
  if (node.pattern) {
    const v = patternMismatch(node.pattern);
    if (v !== undefined)
      push({
        kind: 'pattern-mismatch',
        keyword: 'pattern',
        category: 'formats',
        set: v,
        what: `${JSON.stringify(v)} (does not match ${node.pattern})`,
      });
  }
  if (node.format)
    push({
      kind: 'bad-format',
      keyword: 'format',
      category: 'formats',
      set: badFormat(node.format),
      what: `${JSON.stringify(badFormat(node.format))} (not a ${node.format})`,
    });
  return out;
}

/**
 * Every schema node with its pointer and whether its parent requires it: object members and the first item of arrays.
 */
function walk(
  node: SchemaNode,
  pointer: string,
  required: boolean,
  visit: (node: SchemaNode, pointer: string, required: boolean) => void,
): void {
  if (pointer) visit(node, pointer, required);
  for (const [name, child] of Object.entries(node.properties ?? {}))
    walk(child, `${pointer}/${name}`, node.required?.includes(name) ?? false, visit);
  if (node.items && (node.items.properties || node.items.type || node.items.enum))
    walk(node.items, `${pointer}/0`, false, visit);
}

/**
 * Boundary cases generated from a request schema: for every member, each required field missing,
 * a wrong type, just inside and just outside every minimum, maximum, length and enum, and a broken
 * pattern or format. Small and deterministic, in the schema's order. Each case belongs to the
 * `documented` profile only when the API document states that rule for that field (level must) or
 * describes that shape of it (level should).
 */
export function generateBoundaries(input: GeneratorInput): GeneratedCase[] {
  const cases: GeneratedCase[] = [];
  walk(input.schema, '', false, (node, pointer, required) => {
    // A member of a part the base leaves out (voice_settings, stop) is only reachable by building that part.
    const parentPresent = getAt(input.base, pointer.slice(0, pointer.lastIndexOf('/'))) !== undefined;
    for (const m of mutations(node, required && parentPresent, getAt(input.base, pointer))) {
      const body = clone(input.base);
      if (m.unset) unsetAt(body, pointer);
      else setAt(body, pointer, m.set);
      const valid = m.kind.startsWith('at-') || m.kind.startsWith('enum-') || m.kind === 'fraction';
      if (valid)
        for (const [p, v] of Object.entries(input.samples))
          if (!input.isValid(body) && getAt(body, p) === undefined) setAt(body, p, clone(v));
      if (input.isValid(body) !== valid)
        throw new Error(
          `conformance: generated case ${input.prefix}.${dotted(pointer)}.${m.kind} should be ${valid ? 'valid' : 'invalid'} under schemas/${input.schemaFile}`,
        );
      const doc = input.documented[pointer];
      const should = doc?.should?.keywords.includes(m.keyword) ?? false;
      const cited = should ? doc!.should : doc?.keywords.includes(m.keyword) ? doc : undefined;
      const field = pointer
        .slice(1)
        .replace(/\/0(?=\/|$)/g, '[]')
        .replace(/\//g, '.');
      cases.push({
        id: `${input.prefix}.${dotted(pointer)}.${m.kind}`,
        pointer,
        description: m.unset
          ? `a body without ${field} is rejected with 400`
          : `${field} = ${m.what} is ${valid ? 'accepted' : 'rejected with 400'}`,
        rule: cited
          ? cited.rule
          : `schemas/${input.schemaFile} ${m.keyword} at ${pointer} (a rule of the mock; the API document does not state it)`,
        tags: ['generated', m.category, valid ? 'valid' : 'invalid'],
        profile: cited ? 'documented' : 'full',
        level: should ? 'should' : 'must',
        body,
        status: valid ? 200 : 400,
      });
    }
  });
  return cases;
}
