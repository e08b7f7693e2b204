import { ApiError, ERRORS } from '../contract/errors.js';
import { schemaNumber, schemaText } from '../contract/schemaData.js';

/** The header that sets pacing for one request, e.g. `X-Mock-Pacing: ttft=400; tps=30`. */
export const PACING_HEADER = 'x-mock-pacing';

/** Stream pacing: delay before the first event, and tokens per second after it (0 = as fast as possible). */
export interface Pacing {
  timeToFirstTokenMs: number;
  tokensPerSecond: number;
}

// The header's bounds are those of the settings it overrides (schemas/config.json, pacing): one rule, two
// spellings. tps 0 (no pacing) or at least 1, so no token waits more than a second; ttft at most the time limit of
// the answer it times (timeouts.streamMaxMs for a stream, timeouts.answerMaxMs for a plain answer), since no answer
// outlasts it.
const MIN_TPS = schemaNumber('config.json', '/properties/pacing/properties/tokensPerSecond/anyOf/1/minimum');

/** The time limit of the answer a header times: its value in ms, and its name in a refusal. */
export interface TimeLimit {
  readonly ms: number;
  /** e.g. `stream time limit`. */
  readonly name: string;
}

/** What is wrong with one `name=value` part of the header, or undefined when it is in range. */
function problem(name: 'ttft' | 'tps', value: number, limit: TimeLimit): string | undefined {
  if (name === 'ttft') return value > limit.ms ? `ttft is above the ${limit.name} of ${limit.ms} ms` : undefined;
  return value !== 0 && value < MIN_TPS ? `tps is below ${MIN_TPS} (use 0 for no pacing)` : undefined;
}

/** What one request's pacing header asks for: a fixed time to first token, tokens per second, a latency profile. */
export interface PacingRequest {
  readonly ttft?: number;
  readonly tps?: number;
  /** A latency profile's name (docs/load-testing.md), `off` for none. */
  readonly profile?: string;
}

// A profile's name as the catalogue writes them (schemas/catalogue.json, $defs/profileName).
const PROFILE_NAME = new RegExp(schemaText('catalogue.json', '/$defs/profileName/pattern'));

/**
 * The request's pacing header read, or undefined without one. A part that is not `ttft=MS`, `tps=N` or
 * `profile=NAME`, one out of its bounds, or one given twice is a 400 naming the header and quoting the part: the
 * header is never dropped in silence, in whole or in part. `limit` is the time limit of the answer it times (a
 * ttft may not pass it), `maxQuotedChars` how much of a refused part the 400 quotes (messages.maxPacingPartChars).
 * Read once per request, into its plan (src/pipeline/plan.ts); what it asks is read from there.
 */
export function pacingHeader(
  headers: Record<string, string | string[] | undefined>,
  limit: TimeLimit,
  maxQuotedChars: number,
): PacingRequest | undefined {
  const header = headers[PACING_HEADER];
  if (typeof header !== 'string' || !header.trim()) return undefined;
  const out: { ttft?: number; tps?: number; profile?: string } = {};
  const refuse = (part: string, wrong?: string) =>
    new ApiError(ERRORS.INVALID_HEADER, {
      param: PACING_HEADER,
      message: `Invalid ${PACING_HEADER} header: '${part.trim().slice(0, maxQuotedChars)}'${wrong ? `: ${wrong}` : ''}. Use 'ttft=MS; tps=TOKENS_PER_SECOND' (ttft from 0 to ${limit.ms}; tps 0 for no pacing, else at least ${MIN_TPS}) or 'profile=NAME' (a latency profile, or off), each part at most once.`,
    });
  for (const part of header.split(/[;,]/)) {
    if (!part.trim()) continue; // a trailing separator is a typo, not a mistake worth a 400
    const named = /^\s*profile\s*=\s*(\S+)\s*$/i.exec(part);
    if (named && PROFILE_NAME.test(named[1]!)) {
      if (out.profile !== undefined) throw refuse(part, 'profile is given twice');
      out.profile = named[1]!;
      continue;
    }
    const m = /^\s*(ttft|tps)\s*=\s*(\d+(?:\.\d+)?)\s*$/i.exec(part);
    const name = m?.[1]!.toLowerCase() as 'ttft' | 'tps' | undefined;
    if (name === undefined) throw refuse(part);
    const wrong = out[name] !== undefined ? `${name} is given twice` : problem(name, Number(m![2]), limit);
    if (wrong) throw refuse(part, wrong);
    out[name] = Number(m![2]);
  }
  return out;
}

/** The pacing of one stream: the configured default, with the parts the request's header asked for (pacingHeader). */
export function pacingOf(base: Pacing, asked: PacingRequest | undefined): Pacing {
  if (!asked || (asked.ttft === undefined && asked.tps === undefined)) return base;
  return {
    timeToFirstTokenMs: asked.ttft ?? base.timeToFirstTokenMs,
    tokensPerSecond: asked.tps ?? base.tokensPerSecond,
  };
}
