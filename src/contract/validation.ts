import type { ErrorObject } from 'ajv';
import { ApiError, ERRORS, type Detail } from './errors.js';

// The pointers of a server's 400s are few (the fields clients get wrong): each is worked out once.
const PARAMS = { size: 1024 };
let params = new Map<string, string | null>();

/** Turns a JSON pointer such as /messages/0/content into the dotted form messages[0].content. */
export function pointerToParam(pointer: string, child?: string): string | null {
  // A child is one more part of the pointer, escaped as a pointer's parts are.
  if (child !== undefined) return pointerToParam(`${pointer}/${child.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  let param = params.get(pointer);
  if (param === undefined) {
    param = paramOf(pointer);
    if (params.size >= PARAMS.size) params = new Map();
    params.set(pointer, param);
  }
  return param;
}

function paramOf(pointer: string): string | null {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let out = '';
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out || null;
}

const SHOWN = 60;

/** A short, safe rendering of a value for a message: user input is quoted, cut, never echoed whole. */
export function show(value: unknown): string {
  const text = typeof value === 'string' ? `'${value.slice(0, SHOWN + 1)}'` : (jsonPrefix(value) ?? String(value));
  return text.length > SHOWN ? `${text.slice(0, SHOWN - 3)}...` : text;
}

/**
 * The start of a value's JSON, written only as far as a message shows: a body's whole value (megabytes,
 * or nested a million deep) is never serialized to print sixty characters of it. Undefined where
 * JSON.stringify gives no text (undefined, a function).
 */
function jsonPrefix(value: unknown): string | undefined {
  if (value === undefined || typeof value === 'function') return undefined;
  let out = '';
  const put = (v: unknown): void => {
    if (out.length > SHOWN) return;
    if (v === null || typeof v !== 'object') {
      out += JSON.stringify(typeof v === 'string' ? v.slice(0, SHOWN) : v) ?? 'null';
      return;
    }
    if (Array.isArray(v)) {
      out += '[';
      for (let i = 0; i < v.length && out.length <= SHOWN; i++) {
        if (i > 0) out += ',';
        put(v[i] === undefined || typeof v[i] === 'function' ? null : v[i]);
      }
      out += ']';
      return;
    }
    out += '{';
    let first = true;
    for (const k in v) {
      // for...in walks the keys lazily: a million-key object costs what is shown, not a list of its keys.
      const item = (v as Record<string, unknown>)[k];
      if (out.length > SHOWN) return;
      if (!Object.hasOwn(v, k) || item === undefined || typeof item === 'function') continue;
      out += `${first ? '' : ','}${JSON.stringify(k.slice(0, SHOWN))}:`;
      first = false;
      put(item);
    }
    out += '}';
  };
  put(value);
  return out;
}

const typeName = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;

/** Maps one Ajv error to a violation in OpenAI's wording (param, code, message); undefined for noise. */
export function toDetail(e: ErrorObject): Detail | undefined {
  const p = e.params as Record<string, unknown>;
  const at = pointerToParam(e.instancePath);
  const q = (param: string | null) => `'${param ?? 'body'}'`;
  switch (e.keyword) {
    case 'required': {
      const param = pointerToParam(e.instancePath, String(p.missingProperty));
      return { param, code: 'missing_required_parameter', message: `Missing required parameter: ${q(param)}.` };
    }
    case 'type':
      // JSON.parse makes a number past ±1.8e308 (1e400) Infinity: a number, but none a field can take.
      if (typeof e.data === 'number' && !Number.isFinite(e.data))
        return {
          param: at,
          code: 'invalid_value',
          message: `Invalid ${q(at)}: the number is out of range (too large to be represented: it reads as ${e.data > 0 ? '' : '-'}infinity). Expected ${article(String(p.type))} within ±1.7976931348623157e308.`,
        };
      return {
        param: at,
        code: 'invalid_type',
        message: `Invalid type for ${q(at)}: expected ${article(String(p.type))}, but got ${typeName(e.data)} instead.`,
      };
    case 'maximum':
    case 'minimum':
    case 'exclusiveMaximum':
    case 'exclusiveMinimum': {
      const above = e.keyword.endsWith('aximum');
      const kind = (e.parentSchema as { type?: string } | undefined)?.type === 'integer' ? 'integer' : 'decimal';
      const cmp = String(p.comparison);
      return {
        param: at,
        code: `${kind}_${above ? 'above_max' : 'below_min'}_value`,
        message: `Invalid ${q(at)}: ${kind} ${above ? 'above maximum' : 'below minimum'} value. Expected a value ${cmp} ${String(p.limit)}, but got ${show(e.data)} instead.`,
      };
    }
    case 'maxLength':
      return {
        param: at,
        code: 'string_above_max_length',
        message: `Invalid ${q(at)}: string too long. Expected a string with maximum length ${String(p.limit)}, but got a string with length ${[...String(e.data)].length} instead.`,
      };
    case 'minLength':
      return {
        param: at,
        code: 'string_below_min_length',
        message: `Invalid ${q(at)}: string too short. Expected a string with minimum length ${String(p.limit)}, but got a string with length ${[...String(e.data)].length} instead.`,
      };
    case 'minItems':
      return {
        param: at,
        code: 'array_below_min_length',
        message: `Invalid ${q(at)}: array too short. Expected an array with minimum length ${String(p.limit)}, but got ${(e.data as unknown[]).length} items instead.`,
      };
    case 'enum':
      return {
        param: at,
        code: 'invalid_value',
        message: `Invalid value for ${q(at)}: expected one of ${(p.allowedValues as unknown[]).map((v) => show(v)).join(', ')}, but got ${show(e.data)} instead.`,
      };
    case 'const':
      return {
        param: at,
        code: 'invalid_value',
        message: `Invalid value for ${q(at)}: expected ${show(p.allowedValue)}, but got ${show(e.data)} instead.`,
      };
    case 'pattern':
      return {
        param: at,
        code: 'invalid_value',
        message: `Invalid value for ${q(at)}: ${show(e.data)} does not match the pattern ${String(p.pattern)}.`,
      };
    case 'format':
      return {
        param: at,
        code: 'invalid_value',
        message: `Invalid value for ${q(at)}: ${FORMAT_TEXT[String(p.format)] ?? `expected format ${String(p.format)}`}.`,
      };
    case 'additionalProperties': {
      const param = pointerToParam(e.instancePath, String(p.additionalProperty));
      return { param, code: 'unknown_parameter', message: `Unrecognized request argument supplied: ${param}.` };
    }
    case 'not': {
      // A value the schema names as not allowed (`off` and `catalogue` as a profile's name): its description says why.
      const parent = e.parentSchema as { description?: string; not?: { enum?: unknown[] } } | undefined;
      const reserved = parent?.not?.enum?.includes(e.data) === true;
      const why = parent?.description;
      // A reserved property name (propertyNames) is that property's fault: it is named (a reserved word is short).
      const name = (e as { propertyName?: string }).propertyName;
      const param = reserved && name !== undefined ? pointerToParam(e.instancePath, name) : at;
      return {
        param,
        code: 'invalid_value',
        message: `Invalid value for ${q(param)}: ${show(e.data)} is ${reserved ? 'reserved' : 'not allowed'}${why ? ` (${why})` : ''}.`,
      };
    }
    case 'if':
    case 'oneOf':
    case 'anyOf':
    case 'propertyNames':
      return undefined; // the branch errors that follow (or the name's, before) say what is wrong
    default:
      return {
        param: at,
        code: 'invalid_value',
        message: `Invalid value for ${q(at)}: ${e.message ?? 'not allowed'}.`,
      };
  }
}

const FORMAT_TEXT: Record<string, string> = {
  'base64-image': 'expected base64 or a data URI (data:image/png;base64,...) of an image',
  uri: 'expected an absolute URL',
};

// "a string", "an integer or a string": a schema's types are few, so each wording is made once.
const articles = new Map<string, string>();
const article = (t: string): string => {
  let text = articles.get(t);
  if (text === undefined) {
    text = t
      .split(',')
      .map((x) => (/^[aeiou]/.test(x) ? `an ${x}` : `a ${x}`))
      .join(' or ');
    if (articles.size < 256) articles.set(t, text);
  }
  return text;
};

/** Maps Ajv's errors to violations, dropping the noise and exact duplicates (two rules on one field stay two). */
export function toDetails(errors: readonly ErrorObject[]): Detail[] {
  if (errors.length === 1) {
    const d = toDetail(errors[0]!);
    return d ? [d] : [];
  }
  const seen = new Set<string>();
  const out: Detail[] = [];
  for (const e of errors) {
    const d = toDetail(e);
    if (!d) continue;
    const k = `${d.param}|${d.code}|${d.message}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(d);
  }
  return out;
}

/**
 * The 400 for a body that breaks its schema: the first violation named in the error, the others (at most
 * `maxDetails`, requests.maxDetails) in `details`.
 */
export function invalidBody(all: Detail[], maxDetails: number): ApiError {
  if (!all.length)
    all.push({ param: null, code: 'invalid_value', message: 'The request body does not match its schema.' });
  const details = all.slice(0, maxDetails);
  const first = details[0]!;
  const more =
    all.length > 1
      ? ` (${all.length - 1} more${all.length > details.length ? `; details lists the first ${details.length}` : ' in details'})`
      : '';
  return new ApiError(ERRORS.VALIDATION, {
    param: first.param,
    code: first.code,
    message: first.message + more,
    details,
  });
}
