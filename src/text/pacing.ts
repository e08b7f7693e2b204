import { ApiError, ERRORS } from '../contract/errors.js';
import { schemaNumber } from '../contract/schemaData.js';

/** The header that sets pacing for one request, e.g. `X-Mock-Pacing: ttft=400; tps=30`. */
export const PACING_HEADER = 'x-mock-pacing';

/** Stream pacing: delay before the first event, and tokens per second after it (0 = as fast as possible). */
export interface Pacing {
  timeToFirstTokenMs: number;
  tokensPerSecond: number;
}

// The header's ttft has the bound of the setting it overrides (schemas/config.json, pacing.timeToFirstTokenMs).
const MAX_TTFT_MS = schemaNumber('config.json', '/properties/pacing/properties/timeToFirstTokenMs/maximum');

/** The pacing of one request: the configured default, overridden by the pacing header. */
export function pacingFor(headers: Record<string, string | string[] | undefined>, base: Pacing): Pacing {
  const header = headers[PACING_HEADER];
  if (typeof header !== 'string' || !header.trim()) return base;
  const out = { ...base };
  for (const part of header.split(/[;,]/)) {
    if (!part.trim()) continue; // a trailing separator is a typo, not a mistake worth a 400
    const m = /^\s*(ttft|tps)\s*=\s*(\d+(?:\.\d+)?)\s*$/i.exec(part);
    const value = m ? Number(m[2]) : Number.NaN;
    if (!m || (m[1]!.toLowerCase() === 'ttft' && value > MAX_TTFT_MS)) {
      throw new ApiError(ERRORS.INVALID_HEADER, {
        param: PACING_HEADER,
        message: `Invalid ${PACING_HEADER} header: '${part.trim().slice(0, 40)}'. Use 'ttft=MS; tps=TOKENS_PER_SECOND' (ttft at most ${MAX_TTFT_MS}).`,
      });
    }
    if (m[1]!.toLowerCase() === 'ttft') out.timeToFirstTokenMs = value;
    else out.tokensPerSecond = value;
  }
  return out;
}
