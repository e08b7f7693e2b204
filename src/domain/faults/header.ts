import { ApiError, ERRORS } from '../../contract/errors.js';
import { schemaNumber } from '../../contract/schemaData.js';
import { faultProblem, type FaultLimits, type FaultSpec } from './spec.js';

/** The header that injects faults, e.g. `X-Mock-Fault: status=503; retry-after=2`. */
const FAULT_HEADER = 'x-mock-fault';

const GRAMMAR =
  'status=NNN, retry-after=SECONDS, delay=MS, reset, empty, malformed, stream-cut=N, stall=N, no-retry, separated by ";"';
// The header form takes the bounds of the config form (schemas/fault-rule.json, $defs/fault): one rule, two spellings.
const bound = (field: string, keyword: 'minimum' | 'maximum') =>
  schemaNumber('fault-rule.json', `/$defs/fault/properties/${field}/${keyword}`);
const MIN_STATUS = bound('status', 'minimum');
const MAX_STATUS = bound('status', 'maximum');
const MAX_RETRY_AFTER_S = bound('retryAfter', 'maximum');
const MAX_STREAM_CUT = bound('streamCut', 'maximum');
const MAX_STALL = bound('stall', 'maximum');

type Headers = Record<string, string | string[] | undefined>;

const joined = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(',') : v);
const clip = (s: string) => (s.length > 40 ? `${s.slice(0, 37)}...` : s);

function invalid(header: string, problem: string, usage: string): ApiError {
  return new ApiError(ERRORS.INVALID_HEADER, {
    param: header,
    message: `Invalid ${header} header: ${problem}. Use ${usage}.`,
  });
}

/** An HTTP error status written as three digits, within the schema's bounds (400 to 599); undefined for anything else.
 * */
function errorStatus(value: string): number | undefined {
  const status = Number(value);
  return /^\d{3}$/.test(value) && status >= MIN_STATUS && status <= MAX_STATUS ? status : undefined;
}

/** `code=NNN` of a Prefer header (Prism's convention); other preferences are not ours and are ignored. */
export function parsePrefer(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  let code: number | undefined;
  for (const preference of value.split(',')) {
    const [token = ''] = preference.split(';');
    const eq = token.indexOf('=');
    if (eq < 0 || token.slice(0, eq).trim().toLowerCase() !== 'code') continue;
    const raw = token
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    const status = errorStatus(raw);
    if (status === undefined)
      throw invalid(
        'prefer',
        `code='${clip(raw)}' is not an error status from ${MIN_STATUS} to ${MAX_STATUS}`,
        "'Prefer: code=NNN'",
      );
    if (code !== undefined && code !== status)
      throw invalid('prefer', `code is given twice (${code} and ${status})`, "'Prefer: code=NNN'");
    code = status;
  }
  return code;
}

function count(name: string, raw: string, max: number): number {
  if (!/^\d{1,9}$/.test(raw) || Number(raw) > max)
    throw invalid(FAULT_HEADER, `${name}='${clip(raw)}' must be a whole number from 0 to ${max}`, GRAMMAR);
  return Number(raw);
}

/** The directives of an X-Mock-Fault header, each checked alone (not yet against each other). */
function readDirectives(value: string): FaultSpec {
  const spec: FaultSpec = {};
  const seen = new Set<string>();
  for (const part of value.split(/[;,]/)) {
    const text = part.trim();
    if (!text) continue;
    const eq = text.indexOf('=');
    const name = (eq < 0 ? text : text.slice(0, eq)).trim().toLowerCase();
    const raw = eq < 0 ? undefined : text.slice(eq + 1).trim();
    if (seen.has(name)) throw invalid(FAULT_HEADER, `'${clip(name)}' is given twice`, GRAMMAR);
    seen.add(name);
    const flag = (key: 'reset' | 'empty' | 'malformed' | 'noRetry') => {
      if (raw !== undefined) throw invalid(FAULT_HEADER, `'${name}' takes no value`, GRAMMAR);
      spec[key] = true;
    };
    const needed = () => {
      if (raw === undefined || raw === '')
        throw invalid(FAULT_HEADER, `'${name}' needs a value (${name}=...)`, GRAMMAR);
      return raw;
    };
    switch (name) {
      case 'status': {
        const status = errorStatus(needed());
        if (status === undefined)
          throw invalid(
            FAULT_HEADER,
            `status='${clip(raw!)}' is not an error status from ${MIN_STATUS} to ${MAX_STATUS}`,
            GRAMMAR,
          );
        spec.status = status;
        break;
      }
      case 'retry-after': {
        const v = needed();
        if (!/^\d{1,6}(\.\d{1,3})?$/.test(v) || Number(v) > MAX_RETRY_AFTER_S) {
          throw invalid(
            FAULT_HEADER,
            `retry-after='${clip(v)}' must be seconds from 0 to ${MAX_RETRY_AFTER_S} (up to 3 decimals)`,
            GRAMMAR,
          );
        }
        spec.retryAfter = Number(v);
        break;
      }
      case 'delay':
        spec.delayMs = count(name, needed(), 999_999_999);
        break; // the server maximum is checked below, with its name
      case 'stream-cut':
        spec.streamCut = count(name, needed(), MAX_STREAM_CUT);
        break;
      case 'stall':
        spec.stall = count(name, needed(), MAX_STALL);
        break;
      case 'reset':
        flag('reset');
        break;
      case 'empty':
        flag('empty');
        break;
      case 'malformed':
        flag('malformed');
        break;
      case 'no-retry':
        flag('noRetry');
        break;
      default:
        throw invalid(FAULT_HEADER, `unknown directive '${clip(name)}'`, GRAMMAR);
    }
  }
  return spec;
}

/** Reads an X-Mock-Fault header; throws a 400 naming the first problem. */
export function parseFaultHeader(value: string, limits: FaultLimits): FaultSpec {
  const spec = readDirectives(value);
  const problem = faultProblem(spec, limits);
  if (problem) throw invalid(FAULT_HEADER, problem, GRAMMAR);
  return spec;
}

/**
 * The fault the request's headers ask for: `Prefer: code=NNN` and `X-Mock-Fault`, merged
 * (Prefer's code is the same as status=NNN). Undefined when neither header asks for one.
 */
export function faultFromHeaders(headers: Headers, limits: FaultLimits): FaultSpec | undefined {
  const code = parsePrefer(joined(headers.prefer));
  const header = joined(headers[FAULT_HEADER]);
  const given = header !== undefined && header.trim() !== '';
  if (code === undefined) return given ? parseFaultHeader(header, limits) : undefined;
  const spec = given ? readDirectives(header) : undefined;
  if (spec?.status !== undefined && spec.status !== code) {
    throw invalid(FAULT_HEADER, `status=${spec.status} disagrees with 'Prefer: code=${code}'`, GRAMMAR);
  }
  const merged: FaultSpec = { ...spec, status: code };
  const problem = faultProblem(merged, limits);
  if (problem) throw invalid(FAULT_HEADER, `${problem} (Prefer: code=${code} counts as status=${code})`, GRAMMAR);
  return merged;
}
