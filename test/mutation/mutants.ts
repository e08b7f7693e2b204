/**
 * The mutation engine of the contract. From every request schema, the operations table and the model
 * catalogue it derives each single weakening of a rule that a hurried implementation of the API could
 * ship (mutation testing, as Stryker does it for code, applied to the API contract). Nobody lists the
 * mutants by hand: a new schema keyword, operation, status or catalogue rule brings its own.
 *
 * A mutant is played by a test double in front of the mock (double.ts): for each request it decides
 * whether the weakened server would have answered differently, and if so answers that way.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { operations, operation, type Operation } from '../../src/contract/operations.js';
import { CONFORMANCE_DIR } from '../../src/lib/paths.js';
import { Catalogue } from '../../src/domain/catalogue.js';
import { SchemaRegistry } from '../../src/contract/schemas.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { CUSTOM_FORMATS } from '../../src/contract/validators/formats.js';
import { clone, dotted, getAt } from '../../src/verdict/pointer.js';

/** A JSON Schema node as the engine reads it. */
export interface Node {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
  format?: string;
  required?: string[];
  properties?: Record<string, Node>;
  items?: Node;
  if?: Node;
  then?: Node;
  [k: string]: unknown;
}

/** A request as the double sees it. */
export interface Incoming {
  readonly method: string;
  /** The path without the double's mutant prefix, e.g. /text-provider/chat/completions. */
  readonly path: string;
  readonly headers: Record<string, string | undefined>;
  readonly raw: string;
}

/** What the double does with one request. */
export type Action =
  | { readonly kind: 'forward' }
  /** Forward with this body (a weakened server that accepted what the mock refuses answers like this). */
  | { readonly kind: 'body'; readonly body: string }
  | { readonly kind: 'auth'; readonly authorization: string }
  /** Forward, then change the answer's status (and, for `asError`, keep the error body). */
  | { readonly kind: 'status'; readonly from: number; readonly to: number };

/** One weakened rule. */
export interface Mutant {
  readonly id: string;
  /** The operation the weakening applies to; the runner plays those of its cases that name the rule (run.ts). */
  readonly operation: string;
  readonly family: 'schema' | 'path' | 'coerce' | 'body' | 'auth' | 'status' | 'catalogue' | 'ignore';
  /** The rule as a sentence, for reports. */
  readonly rule: string;
  /** Whether the API document states the rule (level must): then the documented profile must kill the mutant; else full
   * must. */
  readonly documented: boolean;
  /** True when a failed case names the weakened rule (its id names the field, the auth mode, ...). */
  readonly names: (caseId: string) => boolean;
  readonly act: (req: Incoming) => Action;
}

interface CaseFile {
  operation: string;
  prefix: string;
  cases?: { id: string; auth?: string; set?: Record<string, unknown>; body?: unknown }[];
  base?: Record<string, unknown>;
  documented?: Record<string, { keywords: string[] }>;
  variants?: { name: string; set: Record<string, unknown> }[];
}

const VALID_KEY = 'sk-mock-default';
/** A body the mock refuses with 400 whatever the operation: what a narrowed server answers instead. */
const REFUSED = '[]';
const registry = SchemaRegistry.shared();

/** The case files, with their placeholders filled as the runner fills them against the mock. */
export function caseFiles(values: Record<string, string>): CaseFile[] {
  const names = [
    'chat.completions',
    'images.generate',
    'images.edit',
    'video.generate',
    'voice.tts',
    'cloud.speech',
    'me',
  ];
  const suite = JSON.parse(readFileSync(join(CONFORMANCE_DIR, 'suite.json'), 'utf8')) as {
    values: Record<string, string>;
  };
  const all = { ...suite.values, ...values };
  const fill = (text: string) => text.replace(/\{\{(\w+)\}\}/g, (_m, n: string) => JSON.stringify(all[n]).slice(1, -1));
  return names.map((n) => JSON.parse(fill(readFileSync(join(CONFORMANCE_DIR, `${n}.json`), 'utf8'))) as CaseFile);
}

const parse = (raw: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(raw) };
  } catch {
    return { ok: false };
  }
};
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const onPath = (op: Operation) => (req: Incoming) =>
  req.method === op.method && (req.path === op.path || req.path === `/v1${op.path}`);

/** Every instance value a schema path stands for: `*` is every index of an array. */
function valuesAt(doc: unknown, pointer: string): { pointer: string; value: unknown }[] {
  const [head, ...rest] = pointer.split('/').slice(1);
  if (head === undefined) return [{ pointer: '', value: doc }];
  const tail = rest.length ? `/${rest.join('/')}` : '';
  if (head === '*')
    return Array.isArray(doc)
      ? doc.flatMap((v, i) => valuesAt(v, tail).map((x) => ({ pointer: `/${i}${x.pointer}`, value: x.value })))
      : [];
  if (!isObject(doc) || !(head in doc)) return [];
  return valuesAt(doc[head], tail).map((x) => ({ pointer: `/${head}${x.pointer}`, value: x.value }));
}

function setValue(doc: unknown, pointer: string, value: unknown): void {
  const keys = pointer.split('/').slice(1);
  let node = doc as Record<string, unknown>;
  keys.slice(0, -1).forEach((k) => (node = node[k] as Record<string, unknown>));
  node[keys[keys.length - 1]!] = value;
}

/** The schema nodes of a request schema: each with the instance pointer it applies to (`*` for array items). */
function nodes(schema: Node, instance = '', schemaPath = ''): { node: Node; instance: string; schemaPath: string }[] {
  const out = [{ node: schema, instance, schemaPath }];
  for (const [name, child] of Object.entries(schema.properties ?? {}))
    out.push(...nodes(child, `${instance}/${name}`, `${schemaPath}/properties/${name}`));
  if (schema.items) out.push(...nodes(schema.items, `${instance}/*`, `${schemaPath}/items`));
  for (const branch of ['if', 'then'] as const)
    if (schema[branch]) out.push(...nodes(schema[branch]!, instance, `${schemaPath}/${branch}`));
  return out;
}

/** One single edit of a schema: the keyword, what becomes of it, and the schema after it. */
interface Edit {
  readonly keyword: string;
  readonly how: string;
  readonly apply: (node: Node) => void;
  /** A narrowing (the server refuses a valid request) rather than a weakening. */
  readonly narrows?: true;
}

const isType = (node: Node, type: string): boolean => [node.type].flat().includes(type);

const NUMERIC = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const;

/** Each single edit of one node: weakenings (drop, widen) and the off-by-one narrowings of limits. */
function editsOf(node: Node): Edit[] {
  const out: Edit[] = [];
  for (const name of node.required ?? []) {
    out.push({
      keyword: `required:${name}`,
      how: `${name} no longer required`,
      apply: (n) => void (n.required = n.required!.filter((r) => r !== name)),
    });
  }
  if (node.type !== undefined) {
    out.push({ keyword: 'type', how: 'any JSON type accepted', apply: (n) => void delete n.type });
    out.push({
      keyword: 'type',
      how: 'null accepted as well',
      apply: (n) => void (n.type = [...[n.type!].flat(), 'null']),
    });
    if (isType(node, 'number'))
      out.push({
        keyword: 'type',
        how: 'integers only (a fraction refused)',
        narrows: true,
        apply: (n) => void (n.type = 'integer'),
      });
  }
  for (const k of NUMERIC) {
    const v = node[k];
    if (v === undefined) continue;
    // By half the range, or by one for integers (half a step would let no new integer through).
    const span =
      Math.abs((node.maximum ?? node.exclusiveMaximum ?? 1) - (node.minimum ?? node.exclusiveMinimum ?? 0)) || 1;
    const by = [node.type].flat().includes('integer') ? 1 : span / 2;
    const widen = k.endsWith('aximum') ? by : -by;
    out.push({ keyword: k, how: `${k} dropped`, apply: (n) => void delete n[k] });
    out.push({
      keyword: k,
      how: `${k} widened by ${Math.abs(widen)}`,
      apply: (n) => void (n[k] = (n[k] as number) + widen),
    });
    if (k === 'minimum' || k === 'maximum') {
      const exclusive = k === 'minimum' ? 'exclusiveMinimum' : 'exclusiveMaximum';
      out.push({
        keyword: k,
        how: `${k} made exclusive (the limit itself refused)`,
        narrows: true,
        apply: (n) => void ((n[exclusive] = n[k]), delete n[k]),
      });
    }
  }
  for (const k of ['minLength', 'maxLength', 'minItems', 'maxItems'] as const) {
    if (node[k] === undefined) continue;
    out.push({ keyword: k, how: `${k} dropped`, apply: (n) => void delete n[k] });
    if (k.startsWith('max'))
      out.push({ keyword: k, how: `${k} one too many`, apply: (n) => void (n[k] = (n[k] as number) + 1) });
  }
  if (node.enum) {
    out.push({ keyword: 'enum', how: 'any value accepted', apply: (n) => void delete n.enum });
    node.enum.forEach((v, i) => {
      if (node.enum!.length > 1)
        out.push({
          keyword: 'enum',
          how: `${JSON.stringify(v)} refused`,
          narrows: true,
          apply: (n) => void (n.enum = n.enum!.filter((_x, j) => j !== i)),
        });
    });
  }
  if (node.const !== undefined) out.push({ keyword: 'const', how: 'const dropped', apply: (n) => void delete n.const });
  for (const k of ['format', 'pattern'] as const)
    if (node[k] !== undefined) out.push({ keyword: k, how: `${k} dropped`, apply: (n) => void delete n[k] });
  return out;
}

// Not strict: a weakened schema may break Ajv's strict-mode rules (`required` left without `type`).
const ajv = new Ajv2020({ strict: false, allErrors: false });
addFormats.default(ajv);
for (const [name, format] of Object.entries(CUSTOM_FORMATS)) ajv.addFormat(name, format);

/** Compiles a mutated schema with the project's Ajv options and formats (without its $id, which the original holds). */
function compile(schema: Node): (v: unknown) => boolean {
  const { $id: _id, ...rest } = schema as Node & { $id?: string };
  const validate = ajv.compile(rest);
  return (v) => validate(v) as boolean;
}

/** The keyword the documented map of a case file uses for an edit. */
const documentedKeyword = (keyword: string): string =>
  keyword.startsWith('required')
    ? 'required'
    : keyword.startsWith('exclusive')
      ? keyword.replace('exclusiveM', 'm')
      : keyword;

/** The dotted field a case id names for an instance pointer: /messages/* /role -> messages.0.role. */
const fieldOf = (instance: string): string => dotted(instance.replace(/\/\*/g, '/0'));

/** Schema mutants: every single edit of every node of every documented request schema, also on each variant path. */
function schemaMutants(files: readonly CaseFile[]): Mutant[] {
  const out: Mutant[] = [];
  for (const file of files) {
    const op = operation(file.operation);
    if (!op.requestSchema || !file.base) continue;
    const original = registry.get(op.requestSchema).schema as Node;
    const valid = (b: unknown) => registry.check(op.requestSchema!, b).length === 0;
    const base = JSON.stringify(file.base);
    const here = onPath(op);
    for (const { node, instance, schemaPath } of nodes(original)) {
      for (const edit of editsOf(node)) {
        const mutated = clone(original);
        const target = schemaPath ? (getAt(mutated, schemaPath) as Node) : mutated;
        edit.apply(target);
        const accepts = compile(mutated);
        const field = edit.keyword.startsWith('required:') ? `${instance}/${edit.keyword.slice(9)}` : instance;
        const inBranch = /\/(if|then)(\/|$)/.test(schemaPath);
        const documentedRule =
          file.documented?.[field.replace(/\/\*/g, '/0')]?.keywords.includes(documentedKeyword(edit.keyword)) ?? false;
        const name = fieldOf(field);
        // A weakened server answers a request the mock refuses as the mock answers a valid one; a
        // narrowed one (a limit made exclusive, an enum member dropped) refuses a valid request.
        const decide = (body: unknown): Action => {
          const before = valid(body);
          const after = accepts(body);
          if (!before && after) return { kind: 'body', body: base };
          if (before && !after) return { kind: 'body', body: REFUSED };
          return { kind: 'forward' };
        };
        const paths: { suffix: string; when: (b: Record<string, unknown>) => boolean; prefix: string }[] = [
          { suffix: '', when: () => true, prefix: `${file.prefix}.` },
        ];
        // On the other paths: the weakenings of the fields the path leaves alone. (The variants carry only
        // the free invalid cases; a narrowing on one path would need paid valid cases there too.)
        for (const v of edit.narrows || field === '' ? [] : (file.variants ?? [])) {
          if (Object.keys(v.set).some((p) => field === p || field.startsWith(`${p}/`))) continue;
          paths.push({
            suffix: `@${v.name}`,
            prefix: `${file.prefix}@${v.name}.`,
            when: (b) => Object.entries(v.set).every(([p, x]) => JSON.stringify(getAt(b, p)) === JSON.stringify(x)),
          });
        }
        for (const path of paths) {
          out.push({
            id: `schema:${op.id}${path.suffix}:${schemaPath || '/'}:${edit.keyword}:${edit.how}`,
            operation: op.id,
            family: path.suffix ? 'path' : 'schema',
            rule: `${op.id} ${name || '(body)'}: ${edit.how}${path.suffix ? ` (only on the ${path.suffix.slice(1)} path)` : ''}`,
            documented: documentedRule,
            // A rule of a conditional branch (image_url with image_to_video) is named by the field or the mode.
            // A narrowing refuses valid requests, and an edit of the condition of a branch changes which
            // requests the branch applies to: any case of the operation that fails names it.
            names: (id) =>
              id.startsWith(path.prefix) &&
              (edit.narrows === true ||
                (inBranch && !edit.keyword.startsWith('required:')) ||
                (name === ''
                  ? id.includes('.body.')
                  : id.includes(`.${name}.`) ||
                    id.endsWith(`.${name}`) ||
                    (inBranch && /image_to_video|image_url/.test(id)))),
            act: (req) => {
              if (!here(req)) return { kind: 'forward' };
              const parsed = parse(req.raw);
              // The root rule (a JSON object) is the only one a body that is not an object can reach.
              if (!parsed.ok || (isObject(parsed.value) ? !path.when(parsed.value) : name !== '' || path.suffix !== ''))
                return { kind: 'forward' };
              return decide(parsed.value);
            },
          });
        }
      }
    }
  }
  return out;
}

/** Each case file of an operation with a request schema: its operation, the schema, a validity test and a path test. */
function withSchemas(
  files: readonly CaseFile[],
): { file: CaseFile; op: Operation; schema: Node; valid: (b: unknown) => boolean; here: (req: Incoming) => boolean }[] {
  return files.flatMap((file) => {
    const op = operation(file.operation);
    const id = op.requestSchema;
    if (!id || !file.base) return [];
    return [
      {
        file,
        op,
        schema: registry.get(id).schema as Node,
        valid: (b: unknown) => registry.check(id, b).length === 0,
        here: onPath(op),
      },
    ];
  });
}

/** Coercion mutants: a lax parser that turns the string form of a number or boolean into the value, per field. */
function coerceMutants(files: readonly CaseFile[]): Mutant[] {
  const out: Mutant[] = [];
  for (const { file, op, schema, valid, here } of withSchemas(files)) {
    for (const { node, instance } of nodes(schema)) {
      const types = [node.type ?? (node.enum?.every((v) => typeof v === 'number') ? 'number' : [])].flat();
      const kind = types.find((t) => t === 'number' || t === 'integer' || t === 'boolean');
      if (!kind || !instance) continue;
      const name = fieldOf(instance);
      const coerce = (s: string): unknown =>
        kind === 'boolean'
          ? s === 'true'
            ? true
            : s === 'false'
              ? false
              : s
          : s.trim() !== '' && Number.isFinite(Number(s))
            ? Number(s)
            : s;
      out.push({
        id: `coerce:${op.id}:${instance}`,
        operation: op.id,
        family: 'coerce',
        rule: `${op.id} ${name}: the string form of a ${kind} is taken as the ${kind}`,
        documented:
          file.documented?.[instance.replace(/\/\*/g, '/0')]?.keywords.some((k) => k === 'type' || k === 'enum') ??
          false,
        names: (id) => id.startsWith(`${file.prefix}`) && id.includes(`.${name}.`),
        act: (req) => {
          if (!here(req)) return { kind: 'forward' };
          const parsed = parse(req.raw);
          if (!parsed.ok || !isObject(parsed.value) || valid(parsed.value)) return { kind: 'forward' };
          const body = clone(parsed.value);
          for (const at of valuesAt(body, instance))
            if (typeof at.value === 'string') setValue(body, at.pointer, coerce(at.value));
          return valid(body) ? { kind: 'body', body: JSON.stringify(body) } : { kind: 'forward' };
        },
      });
    }
  }
  return out;
}

/** Body mutants: what a server that does not insist on a JSON object body does with other bodies. */
function bodyMutants(files: readonly CaseFile[]): Mutant[] {
  const out: Mutant[] = [];
  for (const file of files) {
    const op = operation(file.operation);
    if (op.method !== 'POST' || !file.base) continue;
    const here = onPath(op);
    const base = JSON.stringify(file.base);
    const names = (id: string) => id.startsWith(`${file.prefix}.body.`);
    const mutant = (how: string, when: (raw: string) => boolean, action: Action): Mutant => ({
      id: `body:${op.id}:${how}`,
      operation: op.id,
      family: 'body',
      rule: `${op.id}: ${how}`,
      documented: true,
      names,
      act: (req) => (here(req) && when(req.raw) ? action : { kind: 'forward' }),
    });
    const nonObject = (raw: string) => {
      const p = parse(raw);
      return p.ok && !isObject(p.value);
    };
    out.push(
      mutant('a JSON body that is not an object is taken as the cheapest valid request', nonObject, {
        kind: 'body',
        body: base,
      }),
    );
    out.push(
      mutant('an empty body is taken as the cheapest valid request', (raw) => raw === '', { kind: 'body', body: base }),
    );
    out.push(
      mutant('malformed JSON is answered 500 (the parser threw)', (raw) => raw !== '' && !parse(raw).ok, {
        kind: 'status',
        from: 400,
        to: 500,
      }),
    );
    out.push(
      mutant('a JSON body that is not an object is answered 500', nonObject, { kind: 'status', from: 400, to: 500 }),
    );
  }
  return out;
}

const AUTH_MODES: Record<string, (authorization: string | undefined) => boolean> = {
  missing: (a) => a === undefined,
  basic: (a) => /^Basic /i.test(a ?? ''),
  empty: (a) => /^Bearer\s*$/i.test(a ?? ''),
  unknown: (a) => /^Bearer \S+$/i.test(a ?? '') && a !== `Bearer ${VALID_KEY}`,
};

/** Auth mutants: each way of presenting no valid key, accepted on one operation. */
function authMutants(files: readonly CaseFile[]): Mutant[] {
  return files.flatMap((file) => {
    const op = operation(file.operation);
    const here = onPath(op);
    return Object.entries(AUTH_MODES).map(([mode, matches]): Mutant => ({
      id: `auth:${op.id}:${mode}`,
      operation: op.id,
      family: 'auth',
      rule: `${op.id}: a request with ${mode === 'missing' ? 'no Authorization header' : mode === 'basic' ? 'the Basic scheme' : mode === 'empty' ? 'an empty bearer token' : 'an unknown key'} is served`,
      documented: true,
      names: (id) => id === `auth.${mode}.${file.prefix}`,
      act: (req) =>
        here(req) && matches(req.headers.authorization)
          ? { kind: 'auth', authorization: `Bearer ${VALID_KEY}` }
          : { kind: 'forward' },
    }));
  });
}

/**
 * The scheme's name compared case-sensitively, so `bearer KEY` is refused as Basic would be: a narrowing,
 * for each operation whose cases send the scheme in lower case (an HTTP scheme name is case-insensitive).
 */
function schemeCaseMutants(files: readonly CaseFile[]): Mutant[] {
  return files.flatMap((file) => {
    const op = operation(file.operation);
    const here = onPath(op);
    const lowercase = new Set((file.cases ?? []).filter((c) => c.auth === 'lowercase').map((c) => c.id));
    if (!lowercase.size) return [];
    return [
      {
        id: `auth:${op.id}:scheme-case`,
        operation: op.id,
        family: 'auth',
        rule: `${op.id}: the scheme 'bearer' in lower case is refused (compared case-sensitively)`,
        documented: false,
        names: (id) => lowercase.has(id),
        act: (req) =>
          here(req) && /^bearer /.test(req.headers.authorization ?? '')
            ? { kind: 'auth', authorization: `Basic ${VALID_KEY}` }
            : { kind: 'forward' },
      },
    ];
  });
}

/** Status mutants: each documented status the suite provokes, answered with another one. */
function statusMutants(files: readonly CaseFile[]): Mutant[] {
  const swaps: [number, number, boolean][] = [
    [400, 200, true],
    [400, 422, true],
    [400, 500, true],
    [401, 403, true],
    [401, 200, true],
    [401, 400, true],
    [200, 201, true],
    [429, 503, false],
    [500, 502, false],
  ];
  return files.flatMap((file) => {
    const op = operation(file.operation);
    const here = onPath(op);
    return swaps
      .filter(([from]) => from !== 400 || op.method === 'POST')
      .map(([from, to, documented]): Mutant => ({
        id: `status:${op.id}:${from}->${to}`,
        operation: op.id,
        family: 'status',
        rule: `${op.id}: ${from} is answered ${to}${to === 200 ? ' (with the error body)' : ''}`,
        documented,
        names: (id) => id.startsWith(`${file.prefix}.`) || id.endsWith(`.${file.prefix}`),
        act: (req) => (here(req) ? { kind: 'status', from, to } : { kind: 'forward' }),
      }));
  });
}

/** Removes every value a schema path stands for (`*` is every index of an array); true when one was there. */
function removeAt(doc: unknown, pointer: string): boolean {
  const keys = pointer.split('/').slice(1);
  const last = keys.pop()!;
  const parents = keys.length ? valuesAt(doc, `/${keys.join('/')}`).map((x) => x.value) : [doc];
  let removed = false;
  for (const parent of parents) {
    if (isObject(parent) && last in parent) {
      delete parent[last];
      removed = true;
    }
  }
  return removed;
}

/**
 * Ignore mutants: each optional field of each request schema validated, then ignored: the server answers
 * a valid request as if the field were not there (a gateway that drops `stop` or `max_tokens` on the way
 * to the model, or `response_format` on the way back). The API document names these fields but shows no
 * response, so the effect of one is judged by the full profile only. A removal that leaves the body
 * invalid (a field required when another has some value) is not an ignored field: it is forwarded as is.
 */
function ignoreMutants(files: readonly CaseFile[]): Mutant[] {
  const out: Mutant[] = [];
  for (const { file, op, schema, valid, here } of withSchemas(files)) {
    for (const { node, instance, schemaPath } of nodes(schema)) {
      if (/\/(if|then)(\/|$)/.test(schemaPath)) continue;
      for (const name of Object.keys(node.properties ?? {})) {
        if (node.required?.includes(name)) continue;
        const field = `${instance}/${name}`;
        const label = fieldOf(field);
        // The cases that set the field, a member of it or the object that holds it (or send a whole body
        // with it), and those whose id names it.
        const at = field.replace(/\/\*/g, '/0');
        const related = (p: string) => p === at || p.startsWith(`${at}/`) || at.startsWith(`${p}/`);
        const setting = new Set(
          (file.cases ?? [])
            .filter(
              (c) =>
                Object.keys(c.set ?? {}).some(related) || (c.body !== undefined && valuesAt(c.body, field).length > 0),
            )
            .map((c) => c.id),
        );
        out.push({
          id: `ignore:${op.id}:${label}`,
          operation: op.id,
          family: 'ignore',
          rule: `${op.id}: ${label} is validated, then ignored`,
          documented: false,
          names: (id) => setting.has(id) || (id.startsWith(`${file.prefix}.`) && id.includes(name)),
          act: (req) => {
            if (!here(req)) return { kind: 'forward' };
            const p = parse(req.raw);
            if (!p.ok || !isObject(p.value) || !valid(p.value)) return { kind: 'forward' };
            const stripped = clone(p.value);
            return removeAt(stripped, field) && valid(stripped)
              ? { kind: 'body', body: JSON.stringify(stripped) }
              : { kind: 'forward' };
          },
        });
      }
    }
  }
  return out;
}

type Limit = 'max_n' | 'max_output_tokens' | 'context_window' | 'max_characters';

/** How each per-model rule is broken by a server that does not enforce it: the request it would repair, and the cases
 * that name it. */
const RULES: Readonly<
  Record<
    Limit,
    {
      op: string;
      over: (b: Record<string, unknown>, limit: number) => Record<string, unknown> | undefined;
      names: RegExp;
    }
  >
> = {
  max_n: {
    op: 'images.generate',
    over: (b, l) => (typeof b.n === 'number' && b.n > l ? { ...b, n: l } : undefined),
    names: /\.n\.|model-limit\.n/,
  },
  max_output_tokens: {
    op: 'chat.completions',
    over: (b, l) => (typeof b.max_tokens === 'number' && b.max_tokens > l ? { ...b, max_tokens: 1 } : undefined),
    names: /max_tokens/,
  },
  // Characters, not tokens: a prompt over the window in tokens is far over it in characters, and one within it here is
  // short.
  context_window: {
    op: 'chat.completions',
    over: (b, l) =>
      JSON.stringify(b.messages ?? '').length > l ? { ...b, messages: [{ role: 'user', content: 'hi' }] } : undefined,
    names: /context-window/,
  },
  max_characters: {
    op: 'voice.tts',
    over: (b, l) => (typeof b.text === 'string' && [...b.text].length > l ? { ...b, text: 'Hi' } : undefined),
    names: /\.text\./,
  },
};

/**
 * Catalogue mutants: each per-model rule of fixtures/models.json not enforced, for every model that
 * shares one limit value (a server that forgets a rule forgets it for all the models it gives that
 * limit), and, for each rule, not enforced at all.
 */
function catalogueMutants(files: readonly CaseFile[], imageNamed: string): Mutant[] {
  const catalogue = new Catalogue(registry);
  const out: Mutant[] = [];
  for (const [limit, { op: opId, over, names }] of Object.entries(RULES) as [Limit, (typeof RULES)[Limit]][]) {
    const op = operation(opId);
    const here = onPath(op);
    const file = files.find((f) => f.operation === opId)!;
    const models = catalogue.models.filter((m) => m.limits[limit] !== undefined);
    const groups = new Map<number, string[]>();
    for (const m of models) groups.set(m.limits[limit]!, [...(groups.get(m.limits[limit]!) ?? []), m.id]);
    const mutant = (label: string, ids: readonly string[]): Mutant => ({
      id: `catalogue:${opId}:${limit}:${label}`,
      operation: opId,
      family: 'catalogue',
      rule: `${opId}: ${limit} is not enforced for ${label === 'all' ? 'any model' : ids.join(', ')}`,
      // The API document states one per-model rule: n at most 1 for the named image model.
      documented: limit === 'max_n' && ids.length === 1 && ids[0] === imageNamed,
      names: (id) => id.startsWith(`${file.prefix}.`) && names.test(id),
      act: (req) => {
        if (!here(req)) return { kind: 'forward' };
        const p = parse(req.raw);
        const body = p.ok && isObject(p.value) ? p.value : undefined;
        const model = body && catalogue.models.find((m) => m.id === String(body.model ?? body.model_id));
        if (!body || !model || !ids.includes(model.id)) return { kind: 'forward' };
        const repaired = over(body, model.limits[limit]!);
        return repaired ? { kind: 'body', body: JSON.stringify(repaired) } : { kind: 'forward' };
      },
    });
    out.push(
      mutant(
        'all',
        models.map((m) => m.id),
      ),
    );
    // Per limit value too, where the suite has a case for each value: a context window case would send
    // a prompt of up to a million tokens, so that rule is checked for the smallest window only.
    if (groups.size > 1 && limit !== 'context_window')
      for (const [value, ids] of groups) out.push(mutant(`${value}`, ids));
  }
  // response_formats: a server that does not check the value against the model's list answers in the model's default
  // instead.
  const images = operation('images.generate');
  const onImages = onPath(images);
  const imagesFile = files.find((f) => f.operation === images.id)!;
  const formats: ReadonlySet<string> = new Set(
    catalogue.ofKind('image').flatMap((m) => m.limits.response_formats ?? []),
  );
  const refusing = catalogue
    .ofKind('image')
    .filter((m) => m.limits.response_formats && m.limits.response_formats.length < formats.size);
  out.push({
    id: `catalogue:${images.id}:response_formats:all`,
    operation: images.id,
    family: 'catalogue',
    rule: `${images.id}: response_format is not checked against the model's response_formats (${refusing.map((m) => m.id).join(', ')})`,
    documented: false,
    names: (id) => id.startsWith(`${imagesFile.prefix}.`) && /response_format/.test(id),
    act: (req) => {
      if (!onImages(req)) return { kind: 'forward' };
      const p = parse(req.raw);
      const body = p.ok && isObject(p.value) ? p.value : undefined;
      const model = body && catalogue.models.find((m) => m.id === String(body.model));
      const taken: readonly string[] | undefined = model?.limits.response_formats;
      // Only the per-model rule is skipped: a value outside the schema's enum is still refused.
      const asked = body?.response_format;
      if (!body || !taken || typeof asked !== 'string' || !formats.has(asked) || taken.includes(asked))
        return { kind: 'forward' };
      const { response_format: _ignored, ...repaired } = body;
      return { kind: 'body', body: JSON.stringify(repaired) };
    },
  });
  return out;
}

/** Every mutant of the contract, for the runner's default values against the mock. */
export function allMutants(values: Record<string, string>): Mutant[] {
  const files = caseFiles(values);
  return [
    ...schemaMutants(files),
    ...coerceMutants(files),
    ...bodyMutants(files),
    ...authMutants(files),
    ...schemeCaseMutants(files),
    ...statusMutants(files),
    ...catalogueMutants(files, values.imageModel!),
    ...ignoreMutants(files),
  ];
}

/** The documented operations, for the runner's --only. */
export const prefixOf = (opId: string, values: Record<string, string>): string =>
  caseFiles(values).find((f) => f.operation === opId)!.prefix;

export { operations };
