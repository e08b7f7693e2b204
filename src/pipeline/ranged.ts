import { ApiError, ERRORS } from '../contract/errors.js';
import type { Reply } from '../contract/reply.js';
import { parseByteRange } from '../lib/byteRange.js';
import type { HandlerRequest } from './handler.js';

/** A body that is answered whole or in one byte range, and how its answers look. */
interface RangedBody {
  readonly contentType: string;
  readonly body: Buffer;
  /** Headers of the 200 and the 206 (Accept-Ranges is added to them). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Headers of the 416 besides Content-Range: those that must hold for any answer of the route. */
  readonly refusalHeaders?: Readonly<Record<string, string>>;
  /** The body as the 416's message names it: `this image`, `the body of request 'x'`. */
  readonly name: string;
}

/**
 * The reply to a GET or HEAD of a body that takes byte ranges (the `ranges: true` operations), as static
 * file servers answer: one range is a 206 with a view of the bytes (no copy) and Content-Range; a range
 * that starts past the end is a 416 `range_not_satisfiable` with `Content-Range: bytes *\/size`. Several
 * ranges, another unit or a malformed header get the whole body (see parseByteRange), and so does a
 * request with If-Range: the answer carries no validator, so none can match (RFC 9110 section 13.1.5).
 * `maxQuotedChars` (messages.maxQuotedChars of fixtures/limits.json): how much of the Range the 416 quotes.
 */
export function rangedReply(headers: HandlerRequest['headers'], served: RangedBody, maxQuotedChars: number): Reply {
  const { body, contentType } = served;
  const ok = { ...served.headers, 'accept-ranges': 'bytes' };
  // Node joins a Range header sent twice into one value, with a comma: two ranges, so the whole body.
  const asked = typeof headers.range === 'string' && headers['if-range'] === undefined ? headers.range : undefined;
  const range = parseByteRange(asked, body.length);
  if (range === 'unsatisfiable') {
    throw new ApiError(ERRORS.RANGE_NOT_SATISFIABLE, {
      message: `The range '${asked!.slice(0, maxQuotedChars)}' does not overlap ${served.name}, which is ${body.length} bytes long.`,
      headers: { ...served.refusalHeaders, 'content-range': `bytes */${body.length}` },
    });
  }
  if (!range) return { kind: 'binary', contentType, body, headers: ok };
  return {
    kind: 'binary',
    status: 206,
    contentType,
    body: body.subarray(range.start, range.end + 1),
    headers: { ...ok, 'content-range': `bytes ${range.start}-${range.end}/${body.length}` },
  };
}
