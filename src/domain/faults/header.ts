import { ApiError, ERRORS } from '../../contract/errors.js';
import { packageLimits } from '../limits.js';
import { boundsOf, FAULT_USAGE, kindByHeader, type FaultKind, type FaultSpec } from './kinds.js';
import { faultProblem, type FaultLimits, type FaultTexts } from './spec.js';

/** The header that injects faults, e.g. `X-Mock-Fault: status=503; retry-after=2`. */
const FAULT_HEADER = 'x-mock-fault';
const PREFER_USAGE = "'Prefer: code=NNN'";

type Headers = Record<string, string | string[] | undefined>;

const joined = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(',') : v);

/** The bounds and quoting the limits give, the package's when they give none (a caller without a server). */
const textsOf = (limits: FaultLimits | undefined): FaultTexts => limits?.faults ?? packageLimits().faults;

/** A refused value as a 400 quotes it: at most `maxQuotedChars`, cut with `...`. */
const clipper =
  ({ maxQuotedChars: max }: FaultTexts) =>
  (s: string): string =>
    s.length > max ? `${s.slice(0, max - 3)}...` : s;

function invalid(header: string, problem: string, usage: string): ApiError {
  return new ApiError(ERRORS.INVALID_HEADER, {
    param: header,
    message: `Invalid ${header} header: ${problem}. Use ${usage}.`,
  });
}

/** An HTTP error status written as three digits, within the bounds of fixtures/limits.json; undefined for anything else. */
function errorStatus(value: string, texts: FaultTexts): number | undefined {
  const status = Number(value);
  const { minimum, maximum } = texts.bounds.status;
  return /^\d{3}$/.test(value) && status >= minimum && status <= maximum ? status : undefined;
}

const statusProblem = (raw: string, texts: FaultTexts, name: string): string =>
  `${name}='${clipper(texts)(raw)}' is not an error status from ${texts.bounds.status.minimum} to ${texts.bounds.status.maximum}`;

/** `code=NNN` of a Prefer header (Prism's convention); other preferences are not ours and are ignored. */
export function parsePrefer(value: string | undefined, limits?: FaultLimits): number | undefined {
  if (value === undefined) return undefined;
  const texts = textsOf(limits);
  let code: number | undefined;
  for (const preference of value.split(',')) {
    const [token = ''] = preference.split(';');
    const eq = token.indexOf('=');
    if (eq < 0 || token.slice(0, eq).trim().toLowerCase() !== 'code') continue;
    const raw = token
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    const status = errorStatus(raw, texts);
    if (status === undefined) throw invalid('prefer', statusProblem(raw, texts, 'code'), PREFER_USAGE);
    if (code !== undefined && code !== status)
      throw invalid('prefer', `code is given twice (${code} and ${status})`, PREFER_USAGE);
    code = status;
  }
  return code;
}

/** A directive's value read by its kind's grammar, within its bounds; throws the 400 that names the rule. */
function readValue(kind: FaultKind, raw: string | undefined, texts: FaultTexts): number | true {
  const clip = clipper(texts);
  if (kind.grammar === 'flag') {
    if (raw !== undefined) throw invalid(FAULT_HEADER, `'${kind.header}' takes no value`, FAULT_USAGE);
    return true;
  }
  if (raw === undefined || raw === '')
    throw invalid(FAULT_HEADER, `'${kind.header}' needs a value (${kind.header}=...)`, FAULT_USAGE);
  const { minimum, maximum } = boundsOf(kind, texts.bounds)!;
  const n = Number(raw);
  switch (kind.grammar) {
    case 'status': {
      const status = errorStatus(raw, texts);
      if (status === undefined) throw invalid(FAULT_HEADER, statusProblem(raw, texts, kind.header), FAULT_USAGE);
      return status;
    }
    case 'seconds':
      if (!/^\d{1,6}(\.\d{1,3})?$/.test(raw) || n < minimum || n > maximum)
        throw invalid(
          FAULT_HEADER,
          `${kind.header}='${clip(raw)}' must be seconds from ${minimum} to ${maximum} (up to 3 decimals)`,
          FAULT_USAGE,
        );
      return n;
    case 'count':
      if (!/^\d{1,9}$/.test(raw) || n < minimum || n > maximum)
        throw invalid(
          FAULT_HEADER,
          `${kind.header}='${clip(raw)}' must be a whole number from ${minimum} to ${maximum}`,
          FAULT_USAGE,
        );
      return n;
  }
}

/** The directives of an X-Mock-Fault header, each checked alone (not yet against each other). */
function readDirectives(value: string, texts: FaultTexts): FaultSpec {
  const clip = clipper(texts);
  const spec: Record<string, number | true> = {};
  const seen = new Set<string>();
  for (const part of value.split(/[;,]/)) {
    const text = part.trim();
    if (!text) continue;
    const eq = text.indexOf('=');
    const name = (eq < 0 ? text : text.slice(0, eq)).trim().toLowerCase();
    const raw = eq < 0 ? undefined : text.slice(eq + 1).trim();
    if (seen.has(name)) throw invalid(FAULT_HEADER, `'${clip(name)}' is given twice`, FAULT_USAGE);
    seen.add(name);
    const kind = kindByHeader.get(name);
    if (!kind) throw invalid(FAULT_HEADER, `unknown directive '${clip(name)}'`, FAULT_USAGE);
    spec[kind.field] = readValue(kind, raw, texts);
  }
  return spec as FaultSpec;
}

/** Reads an X-Mock-Fault header; throws a 400 naming the first problem. */
export function parseFaultHeader(value: string, limits: FaultLimits): FaultSpec {
  const spec = readDirectives(value, textsOf(limits));
  const problem = faultProblem(spec, limits);
  if (problem) throw invalid(FAULT_HEADER, problem, FAULT_USAGE);
  return spec;
}

/**
 * The fault the request's headers ask for: `Prefer: code=NNN` and `X-Mock-Fault`, merged
 * (Prefer's code is the same as status=NNN). Undefined when neither header asks for one.
 */
export function faultFromHeaders(headers: Headers, limits: FaultLimits): FaultSpec | undefined {
  const code = parsePrefer(joined(headers.prefer), limits);
  const header = joined(headers[FAULT_HEADER]);
  const given = header !== undefined && header.trim() !== '';
  if (code === undefined) return given ? parseFaultHeader(header, limits) : undefined;
  const spec = given ? readDirectives(header, textsOf(limits)) : undefined;
  if (spec?.status !== undefined && spec.status !== code) {
    throw invalid(FAULT_HEADER, `status=${spec.status} disagrees with 'Prefer: code=${code}'`, FAULT_USAGE);
  }
  const merged: FaultSpec = { ...spec, status: code };
  const problem = faultProblem(merged, limits);
  if (problem) throw invalid(FAULT_HEADER, `${problem} (Prefer: code=${code} counts as status=${code})`, FAULT_USAGE);
  return merged;
}
