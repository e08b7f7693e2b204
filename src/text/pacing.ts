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
// spellings. tps 0 (no pacing) or at least 1, so no token waits more than a second; ttft at most the
// server's stream time limit (timeouts.streamMaxMs), since no stream outlasts it.
const MIN_TPS = schemaNumber('config.json', '/properties/pacing/properties/tokensPerSecond/anyOf/1/minimum');

/** What is wrong with one `name=value` part of the header, or undefined when it is in range. */
function problem(name: 'ttft' | 'tps', value: number, maxTtftMs: number): string | undefined {
  if (name === 'ttft') return value > maxTtftMs ? `ttft is above the stream time limit of ${maxTtftMs} ms` : undefined;
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
 * The request's pacing header read, or undefined without one; a part that is not `ttft=MS`, `tps=N` or
 * `profile=NAME` in range is a 400 naming the header. `maxTtftMs` is the stream time limit, `maxQuotedChars`
 * how much of a refused part the 400 quotes (messages.maxPacingPartChars).
 */
export function pacingHeader(
  headers: Record<string, string | string[] | undefined>,
  maxTtftMs: number,
  maxQuotedChars: number,
): PacingRequest | undefined {
  const header = headers[PACING_HEADER];
  if (typeof header !== 'string' || !header.trim()) return undefined;
  const out: { ttft?: number; tps?: number; profile?: string } = {};
  for (const part of header.split(/[;,]/)) {
    if (!part.trim()) continue; // a trailing separator is a typo, not a mistake worth a 400
    const named = /^\s*profile\s*=\s*(\S+)\s*$/i.exec(part);
    if (named && PROFILE_NAME.test(named[1]!)) {
      out.profile = named[1]!;
      continue;
    }
    const m = /^\s*(ttft|tps)\s*=\s*(\d+(?:\.\d+)?)\s*$/i.exec(part);
    const name = m?.[1]!.toLowerCase() as 'ttft' | 'tps' | undefined;
    const value = m ? Number(m[2]) : Number.NaN;
    const wrong = name === undefined ? undefined : problem(name, value, maxTtftMs);
    if (name === undefined || wrong) {
      throw new ApiError(ERRORS.INVALID_HEADER, {
        param: PACING_HEADER,
        message: `Invalid ${PACING_HEADER} header: '${part.trim().slice(0, maxQuotedChars)}'${wrong ? `: ${wrong}` : ''}. Use 'ttft=MS; tps=TOKENS_PER_SECOND' (ttft from 0 to ${maxTtftMs}; tps 0 for no pacing, else at least ${MIN_TPS}) or 'profile=NAME' (a latency profile, or off).`,
      });
    }
    out[name] = value;
  }
  return out;
}

/**
 * The pacing of one request: the configured default, overridden by the pacing header's ttft and tps (see
 * pacingHeader).
 */
export function pacingFor(
  headers: Record<string, string | string[] | undefined>,
  base: Pacing,
  maxTtftMs: number,
  maxQuotedChars: number,
): Pacing {
  const asked = pacingHeader(headers, maxTtftMs, maxQuotedChars);
  if (!asked) return base;
  return {
    timeToFirstTokenMs: asked.ttft ?? base.timeToFirstTokenMs,
    tokensPerSecond: asked.tps ?? base.tokensPerSecond,
  };
}
