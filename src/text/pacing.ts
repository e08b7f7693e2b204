import { ApiError, ERRORS } from '../contract/errors.js';
import { schemaNumber } from '../contract/schemaData.js';

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

/**
 * The pacing of one request: the configured default, overridden by the pacing header; `maxTtftMs` is the
 * stream time limit, `maxQuotedChars` how much of a refused part the 400 quotes (messages.maxPacingPartChars).
 */
export function pacingFor(
  headers: Record<string, string | string[] | undefined>,
  base: Pacing,
  maxTtftMs: number,
  maxQuotedChars: number,
): Pacing {
  const header = headers[PACING_HEADER];
  if (typeof header !== 'string' || !header.trim()) return base;
  const out = { ...base };
  for (const part of header.split(/[;,]/)) {
    if (!part.trim()) continue; // a trailing separator is a typo, not a mistake worth a 400
    const m = /^\s*(ttft|tps)\s*=\s*(\d+(?:\.\d+)?)\s*$/i.exec(part);
    const name = m?.[1]!.toLowerCase() as 'ttft' | 'tps' | undefined;
    const value = m ? Number(m[2]) : Number.NaN;
    const wrong = name === undefined ? undefined : problem(name, value, maxTtftMs);
    if (name === undefined || wrong) {
      throw new ApiError(ERRORS.INVALID_HEADER, {
        param: PACING_HEADER,
        message: `Invalid ${PACING_HEADER} header: '${part.trim().slice(0, maxQuotedChars)}'${wrong ? `: ${wrong}` : ''}. Use 'ttft=MS; tps=TOKENS_PER_SECOND' (ttft from 0 to ${maxTtftMs}; tps 0 for no pacing, else at least ${MIN_TPS}).`,
      });
    }
    if (name === 'ttft') out.timeToFirstTokenMs = value;
    else out.tokensPerSecond = value;
  }
  return out;
}
