import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { operation } from '../../contract/operations.js';
import { deepFreeze } from '../../lib/freeze.js';
import { CONFORMANCE_DIR } from '../../lib/paths.js';
import { schemaId, type SchemaRegistry } from '../../contract/schemas.js';
import { generateBoundaries, type DocumentedRules, type GeneratedCase } from './boundaries.js';
import { Catalogue, type Model, type ModelKind } from '../../domain/catalogue.js';
import { packageLimits, type Limits } from '../../domain/limits.js';
import { estimateCost, isPaid, zeroCost } from '../../verdict/cost.js';
import { clone, setAt, unsetAt } from '../../verdict/pointer.js';
import type { AuthMode, Case, CheckName, Level, Profile } from '../../verdict/types.js';
import { slug, type SchemaNode } from './values.js';
import { NEAR_MISSES } from './credentials.js';

/** The values that fill a case file's placeholders, from flags or the mock's catalogue. */
export interface SuiteValues {
  chatModel: string;
  imageModel: string;
  videoModel: string;
  voiceId: string;
  cloudVoice: string;
  ttsModel: string;
  imageUrl: string;
}

interface CaseSpec {
  id: string;
  description: string;
  rule: string;
  tags: readonly string[];
  profile: Profile;
  /** Absent: must. */
  level?: Level;
  billable: boolean;
  auth?: AuthMode;
  headers?: Record<string, string>;
  body?: Record<string, unknown>;
  raw?: string;
  set?: Record<string, unknown>;
  unset?: string[];
  expect: { status: number; checks?: CheckName[] };
  /** The field (a JSON pointer) whose rule the case breaks. */
  field?: string;
  requires?: Case['requires'];
  tests429?: boolean;
}

/** Another valid base that takes another path through a server. */
interface Variant {
  name: string;
  set: Record<string, unknown>;
  rule: string;
}

interface CaseFile {
  operation: string;
  prefix: string;
  base?: Record<string, unknown>;
  variants?: Variant[];
  samples?: Record<string, unknown>;
  documented?: DocumentedRules;
  cases: CaseSpec[];
}

interface SuiteFile {
  values: Record<string, string>;
  unknownKey: string;
  everyOperation: (Omit<CaseSpec, 'id' | 'billable'> & { name: string })[];
}

/** The loaded suite: every case of every profile, and the key no target should accept. */
interface Suite {
  readonly cases: readonly Case[];
  readonly unknownKey: string;
}

const CASE_SCHEMA = schemaId('conformance-case.json');

/** Replaces {{name}} placeholders in every string of a JSON value. */
export function fill<T>(value: T, values: Readonly<Record<string, string>>): T {
  const text = JSON.stringify(value, (_k, v: unknown) =>
    typeof v === 'string'
      ? v.replace(/\{\{(\w+)\}\}/g, (m, name: string) => {
          if (!(name in values)) throw new Error(`conformance: unknown placeholder ${m}`);
          return values[name]!;
        })
      : v,
  );
  return text === undefined ? value : (JSON.parse(text) as T);
}

function readJson(registry: SchemaRegistry, dir: string, file: string, schema: string): unknown {
  const data = JSON.parse(readFileSync(join(dir, file), 'utf8')) as unknown;
  const errors = registry.check(schema, data);
  if (errors.length) throw new Error(`conformance/${file}${errors[0]!.instancePath}: ${errors[0]!.message}`);
  return data;
}

/** Makes the cases of a run, whose paid units are estimated with the mock's defaults (`limits`) for what a request
 * leaves out. */
const caseMaker =
  (limits: Limits) =>
  (file: CaseFile, spec: CaseSpec, base: Record<string, unknown> | undefined): Case => {
    const op = operation(file.operation);
    let body: Record<string, unknown> | undefined;
    if (op.method === 'POST' && spec.raw === undefined) {
      const built = clone(spec.body ?? base ?? {});
      for (const p of spec.unset ?? []) unsetAt(built, p);
      for (const [p, v] of Object.entries(spec.set ?? {})) setAt(built, p, v);
      body = built;
    }
    const cost = spec.billable ? estimateCost(file.operation, body, limits) : zeroCost();
    return {
      id: spec.id,
      operation: file.operation,
      description: spec.description,
      rule: spec.rule,
      // The file's prefix is a tag too, so `--only chat` also takes the auth and fault cases of chat.
      tags: [...new Set([...spec.tags, file.prefix])],
      profile: spec.profile,
      level: spec.level ?? 'must',
      billable: spec.billable,
      cost,
      request: {
        method: op.method as 'GET' | 'POST',
        path: op.path,
        auth: spec.auth ?? 'valid',
        headers: spec.headers ?? {},
        ...(body ? { body } : {}),
        ...(spec.raw !== undefined ? { raw: spec.raw } : {}),
      },
      expect: { status: spec.expect.status, checks: spec.expect.checks ?? [] },
      ...(spec.field ? { field: spec.field } : {}),
      ...(spec.requires ? { requires: spec.requires } : {}),
      ...(spec.tests429 ? { tests429: true } : {}),
    };
  };

const BODY_RULE =
  'What the service does: request bodies are JSON objects; Errors: a bad request is answered 400 (never a 5xx)';

/**
 * Bodies that are not a JSON object, for every operation that takes one: broken or cut-off JSON, JSON
 * of another type, and no body at all. A hurried server answers them 500 (the parser threw) or treats
 * them as an empty request.
 */
/** A valid body made malformed JSON: its first colon missing. */
const malformed = (base: Record<string, unknown>): string => JSON.stringify(base).replace(':', ' ');

function syntaxCases(prefix: string, base: Record<string, unknown>): CaseSpec[] {
  const text = JSON.stringify(base);
  const bodies: [string, string, string][] = [
    ['malformed', malformed(base), 'malformed JSON (a colon missing)'],
    ['truncated', text.slice(0, Math.ceil(text.length / 2)), 'JSON cut off half-way'],
    ['array', `[${text}]`, 'a JSON array holding a valid body'],
    ['number', '42', 'the JSON number 42'],
    ['string', JSON.stringify(text), 'a JSON string holding a valid body'],
    ['null', 'null', 'JSON null'],
    ['boolean', 'true', 'JSON true'],
    ['empty', '', 'an empty body'],
  ];
  return bodies.map(([kind, raw, what]) => ({
    id: `${prefix}.body.${kind}`,
    description: `${what} with Content-Type application/json is rejected with 400`,
    rule: BODY_RULE,
    tags: ['invalid', 'body', 'syntax'],
    profile: 'documented',
    billable: false,
    raw,
    expect: { status: 400 },
  }));
}

const KEY_FIRST_RULE =
  'Authentication 1 and 3: every request carries the key, and one without it is answered 401 whatever its body (the mock checks the key before it reads the body, as OpenAI does)';

/**
 * A request without a key whose body is also bad, for every operation that takes one. A server that
 * parses or validates the body before it checks the key (a body parser mounted ahead of the auth
 * middleware) answers it 400: it tells a caller with no key what its requests must look like, and a
 * client missing its key is sent to fix its body first.
 */
function keyFirstCases(prefix: string, base: Record<string, unknown>): CaseSpec[] {
  const bodies: [string, Pick<CaseSpec, 'raw' | 'body'>, string][] = [
    ['missing-bad-json', { raw: malformed(base) }, 'malformed JSON'],
    ['missing-invalid-body', { body: {} }, 'an empty JSON object (every required field missing)'],
  ];
  return bodies.map(([kind, request, what]) => ({
    id: `auth.${kind}.${prefix}`,
    description: `a request without an Authorization header and with ${what} as its body is answered 401, not 400`,
    rule: KEY_FIRST_RULE,
    tags: ['auth', 'invalid'],
    profile: 'full',
    billable: false,
    auth: 'missing',
    ...request,
    expect: { status: 401 },
  }));
}

const NEAR_MISS_RULE =
  "Authentication 1, 2 and 3: every request carries the header Authorization with the value 'Bearer <API_KEY>', the key is a single API key, and when the key is invalid the service answers 401";

/**
 * The operations the near misses run on: GET /v1/me, free whatever the target answers, and chat, the
 * cheapest paid operation (the base asks for one token). A correct server answers every near miss 401,
 * but a broken one that takes them does paid work for each: one token apiece on chat, an image or a
 * 4-second video apiece on the others. Gateways compare keys in one place, their own routes (the
 * identity call) or the ones they forward (a provider's): one operation of each finds the comparison;
 * the four plain auth cases still run on every operation, for a key check forgotten on one.
 */
const NEAR_MISS_OPERATIONS: ReadonlySet<string> = new Set(['me', 'chat.completions']);

/** A case for each near miss of the key (credentials.ts), each answered 401. */
function nearMissCases(prefix: string): CaseSpec[] {
  return NEAR_MISSES.map((n) => ({
    id: `auth.near-miss.${n.id}.${prefix}`,
    description: `${n.what} is answered 401 (a gateway that ${n.accepts} serves it)`,
    rule: NEAR_MISS_RULE,
    tags: ['auth', 'near-miss', 'invalid'],
    profile: 'documented',
    billable: false,
    auth: `near-miss:${n.id}`,
    expect: { status: 401 },
  }));
}

const MODEL_RULE =
  "the mock's model catalogue (fixtures/models.json), a rule per model that the API document does not state";

/**
 * Cases for the per-model rules of the catalogue, generated from it as the boundary cases are from the
 * schemas: one over the output-token limit and one over the most images per request, for a model of
 * each distinct limit, one over the context window of the model with the smallest (a prompt over
 * the largest would be megabytes), and a `response_format` refused by a model of each distinct list of
 * values that leaves one out.
 */
function modelLimitCases(operationId: string, prefix: string, catalogue: Catalogue): CaseSpec[] {
  const spec = (id: string, description: string, set: Record<string, unknown>, field: string): CaseSpec => ({
    id: `${prefix}.model-limit.${id}`,
    field,
    description,
    rule: MODEL_RULE,
    tags: ['invalid', 'models', 'generated'],
    profile: 'full',
    billable: false,
    set,
    expect: { status: 400 },
  });
  // The first model of each distinct value of a limit.
  const distinct = (kind: ModelKind, limit: 'max_output_tokens' | 'max_n'): [Model, number][] => {
    const seen = new Map<number, Model>();
    for (const m of catalogue.ofKind(kind))
      if (m.limits[limit] !== undefined && !seen.has(m.limits[limit]!)) seen.set(m.limits[limit]!, m);
    return [...seen].map(([value, m]) => [m, value]);
  };
  if (operationId === 'chat.completions') {
    const out = distinct('text', 'max_output_tokens').map(([m, max]) =>
      spec(
        `max_tokens-${slug(m.id)}`,
        `max_tokens one over ${m.id}'s output limit (${max}) is rejected with 400`,
        { '/model': m.id, '/max_tokens': max + 1 },
        '/max_tokens',
      ),
    );
    const ctx = catalogue
      .ofKind('text')
      .reduce<Model | undefined>(
        (best, m) =>
          m.limits.context_window !== undefined &&
          (best === undefined || m.limits.context_window < best.limits.context_window!)
            ? m
            : best,
        undefined,
      );
    // " hello" is one token in every encoding the catalogue names: window + 8 of them overflow it.
    if (ctx)
      out.push(
        spec(
          'context-window',
          `a prompt longer than ${ctx.id}'s context window (${ctx.limits.context_window} tokens) is rejected with 400`,
          {
            '/model': ctx.id,
            '/messages/0/content': 'hello'.concat(' hello'.repeat(ctx.limits.context_window! + 8)),
          },
          '/messages',
        ),
      );
    return out;
  }
  if (operationId === 'images.generate') {
    const out = distinct('image', 'max_n').map(([m, max]) =>
      spec(
        `n-${slug(m.id)}`,
        `n = ${max + 1} for ${m.id}, one over its limit of ${max}, is rejected with 400`,
        { '/model': m.id, '/n': max + 1 },
        '/n',
      ),
    );
    // Every value some image model answers in; a model refuses those it does not take, its own default first
    // (gpt-image-1 refuses even b64_json, the format it always answers in: a server must not wave that through).
    const images = catalogue.ofKind('image');
    const values = [
      ...new Set(images.flatMap((m) => [m.limits.default_response_format, ...(m.limits.response_formats ?? [])])),
    ].filter((v) => v !== undefined);
    const lists = new Set<string>();
    for (const m of images) {
      const taken = m.limits.response_formats;
      if (!taken || lists.has(taken.join())) continue;
      lists.add(taken.join());
      const refused = values.filter((v) => !taken.includes(v));
      const fallback = m.limits.default_response_format;
      const value = fallback !== undefined && refused.includes(fallback) ? fallback : refused[0];
      if (value === undefined) continue;
      const takes = taken.length
        ? `takes only ${taken.join(' or ')}`
        : `takes no response_format (it always answers ${fallback})`;
      out.push(
        spec(
          `response_format-${slug(m.id)}`,
          `response_format = "${value}" for ${m.id}, which ${takes}, is rejected with 400`,
          { '/model': m.id, '/response_format': value },
          '/response_format',
        ),
      );
    }
    return out;
  }
  return [];
}

/**
 * What a generated case needs of the target beyond its schema: a valid `response_format` sent to the run's
 * image model is answered 200 only by a model that takes that value (the catalogue's `response_formats`;
 * gpt-image-1 takes none), so the runner decides at run time whether the case applies.
 */
function requirementOf(operationId: string, g: GeneratedCase): Pick<CaseSpec, 'requires'> {
  const format = g.body.response_format;
  return operationId === 'images.generate' && g.status === 200 && typeof format === 'string'
    ? { requires: { imageResponseFormat: format } }
    : {};
}

/** conformance/'s suite file and its case files, each checked against its schema, placeholders filled with the run's
 * values, in file-name order. */
function readSuite(
  registry: SchemaRegistry,
  runValues: SuiteValues,
  dir: string,
): { suite: SuiteFile; files: CaseFile[] } {
  const suite = readJson(registry, dir, 'suite.json', `${CASE_SCHEMA}#/$defs/suite`) as SuiteFile;
  const values: Record<string, string> = { ...suite.values, ...(runValues as unknown as Record<string, string>) };
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.json') && f !== 'suite.json')
    .sort();
  return { suite, files: names.map((name) => fill(readJson(registry, dir, name, CASE_SCHEMA) as CaseFile, values)) };
}

/** An operation's valid request of its case file (`base`, placeholders filled) and the short name its cases carry. */
export interface OperationBase {
  readonly operation: string;
  readonly prefix: string;
  readonly base: Readonly<Record<string, unknown>>;
}

/** The valid request of every operation whose case file has one, for what builds on the suite's requests (the gateway
 * profile). */
export const operationBases = (
  registry: SchemaRegistry,
  runValues: SuiteValues,
  dir: string = CONFORMANCE_DIR,
): OperationBase[] =>
  readSuite(registry, runValues, dir).files.flatMap((f) =>
    f.base ? [{ operation: f.operation, prefix: f.prefix, base: f.base }] : [],
  );

/** The suite loadSuite built last for each registry, with what it was built from. */
const built = new WeakMap<SchemaRegistry, { readonly from: string; readonly suite: Suite }>();

/**
 * loadSuite's suite, built again only when the values or a file of the folder changed (its names, sizes and times): a
 * program that runs the suite again in one process (against several targets, or the mutation test's hundreds of runs)
 * does not rebuild its thousands of cases each time. Frozen: no run can change what the next one reads.
 */
export function cachedSuite(registry: SchemaRegistry, runValues: SuiteValues, dir: string = CONFORMANCE_DIR): Suite {
  const files = readdirSync(dir)
    .sort()
    .map((name) => {
      const { size, mtimeMs } = statSync(join(dir, name));
      return [name, size, mtimeMs];
    });
  const from = JSON.stringify([dir, runValues, files]);
  const last = built.get(registry);
  if (last?.from === from) return last.suite;
  const suite = deepFreeze(loadSuite(registry, runValues, dir));
  built.set(registry, { from, suite });
  return suite;
}

/**
 * Loads conformance/: every case file checked against schemas/conformance-case.json, placeholders
 * filled with the run's values, the shared auth and fault cases applied to every operation, the body
 * syntax cases applied to every operation that takes a body, and the boundary cases generated from
 * the request schemas. Throws on a malformed file or a duplicate id.
 */
export function loadSuite(registry: SchemaRegistry, runValues: SuiteValues, dir: string = CONFORMANCE_DIR): Suite {
  const { suite, files } = readSuite(registry, runValues, dir);
  const catalogue = new Catalogue(registry);
  const toCase = caseMaker(packageLimits(registry));
  const cases: Case[] = [];
  for (const file of files) {
    const op = operation(file.operation);
    const handWritten = file.cases.map((spec) => toCase(file, spec, file.base));
    if (op.method === 'POST' && file.base) {
      handWritten.push(
        ...[...syntaxCases(file.prefix, file.base), ...keyFirstCases(file.prefix, file.base)].map((spec) =>
          toCase(file, spec, file.base),
        ),
      );
    }
    if (file.base)
      handWritten.push(
        ...modelLimitCases(file.operation, file.prefix, catalogue).map((spec) => toCase(file, spec, file.base)),
      );
    const templates = suite.everyOperation.map(({ name: t, ...spec }) =>
      toCase(file, { ...spec, id: `${t}.${file.prefix}`, billable: false }, file.base),
    );
    if (NEAR_MISS_OPERATIONS.has(file.operation))
      templates.push(...nearMissCases(file.prefix).map((spec) => toCase(file, spec, file.base)));
    const generated = [];
    if (op.requestSchema && file.base) {
      const schemaFile = op.requestSchema.slice(op.requestSchema.lastIndexOf('/') + 1);
      const seen = new Set(handWritten.filter((c) => c.billable).map((c) => JSON.stringify(c.request.body)));
      const generate = (prefix: string, base: Record<string, unknown>) =>
        generateBoundaries({
          prefix,
          schemaFile,
          schema: registry.get(op.requestSchema!).schema as SchemaNode,
          base,
          samples: file.samples ?? {},
          documented: file.documented ?? {},
          isValid: (b) => registry.check(op.requestSchema!, b).length === 0,
        });
      for (const g of generate(file.prefix, file.base)) {
        const billable = g.status === 200 && isPaid(file.operation);
        // A valid boundary equal to a hand-written request would only cost money twice.
        if (billable && seen.has(JSON.stringify(g.body))) continue;
        const field = g.status === 400 ? { field: g.pointer } : {};
        generated.push(
          toCase(
            file,
            {
              ...g,
              ...requirementOf(file.operation, g),
              ...field,
              billable,
              body: g.body,
              expect: { status: g.status },
            },
            file.base,
          ),
        );
      }
      // The same invalid requests on the other paths: free, and what a rule checked on one path only misses.
      for (const variant of file.variants ?? []) {
        const base = clone(file.base);
        for (const [p, v] of Object.entries(variant.set)) setAt(base, p, v);
        const own = Object.keys(variant.set);
        for (const g of generate(`${file.prefix}@${variant.name}`, base)) {
          if (g.status !== 400 || own.some((p) => g.pointer === p || g.pointer.startsWith(`${p}/`))) continue;
          const rule = `${g.rule}; on the ${variant.name} path (${variant.rule})`;
          generated.push(
            toCase(
              file,
              {
                ...g,
                rule,
                tags: [...g.tags, 'variant', variant.name],
                field: g.pointer,
                billable: false,
                body: g.body,
                expect: { status: 400 },
              },
              base,
            ),
          );
        }
      }
    }
    cases.push(...templates, ...handWritten, ...generated);
  }
  const ids = new Set<string>();
  for (const c of cases) {
    if (ids.has(c.id)) throw new Error(`conformance: duplicate case id ${c.id}`);
    ids.add(c.id);
  }
  return { cases, unknownKey: suite.unknownKey };
}
