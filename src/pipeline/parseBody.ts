import { isAscii } from 'node:buffer';
import { ApiError, ERRORS } from '../contract/errors.js';
import { pointerToParam } from '../contract/validation.js';
import type { BodyBudget } from '../domain/bodyBudget.js';
import { forbiddenKeyAt, forbiddenKeyMessage, mayHoldForbiddenKey } from '../lib/keys.js';
import { readBody } from './readBody.js';
import type { RequestState, Step } from './steps.js';
import type { Limits } from '../domain/limits.js';

/** A JSON media type: `application/json` or any `application/...+json`, with or without parameters. */
export const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

// Fatal: bytes that are not UTF-8 are an error, never silently replaced by U+FFFD.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

const jsonKind = (v: unknown): string =>
  v === undefined
    ? 'an empty body'
    : v === null
      ? 'null'
      : Array.isArray(v)
        ? 'an array'
        : typeof v === 'object'
          ? 'an object'
          : `a ${typeof v}`;

/** The bound of a JSON text broken, found before it is parsed. */
type BrokenBound = 'depth' | 'values';

/**
 * The first bound the JSON text breaks: nesting objects/arrays deeper than `maxDepth`, or holding more than
 * `maxValues` values (objects, arrays, strings, numbers, literals; an object's keys are not counted). One pass
 * that counts brackets and commas outside strings, stopped at the first bound passed; invalid JSON is left for
 * JSON.parse to report. A string is skipped with indexOf, at native speed: a base64 image is one multi-megabyte
 * string, and a character-by-character loop over it cost more than parsing it.
 */
export function brokenBound(text: string, maxDepth: number, maxValues: number): BrokenBound | undefined {
  // Each level needs its own bracket and each value a character at least, so shorter texts break neither bound.
  if (text.length <= maxDepth && text.length <= maxValues) return undefined;
  let depth = 0;
  // The root, then one per comma and one per container that is not empty (its first item).
  let values = 1;
  let opened = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20) continue; // whitespace
    if (opened) {
      opened = false;
      if (c !== 0x7d && c !== 0x5d && ++values > maxValues) return 'values';
    }
    if (c === 0x22) {
      i = closingQuote(text, i);
      if (i < 0) return undefined; // an unterminated string
    } else if (c === 0x2c) {
      if (++values > maxValues) return 'values';
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return 'depth';
      opened = true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}

/** True when the JSON text nests objects/arrays deeper than `limit` (brokenBound for depth alone). */
export const nestsDeeperThan = (text: string, limit: number): boolean => brokenBound(text, limit, Infinity) === 'depth';

/** Index of the quote that closes the string opened at `open`: the next one after an even run of backslashes; -1 if
 * none. */
function closingQuote(text: string, open: number): number {
  for (let at = open; ;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return -1;
    // The opening quote ends any run, so this never looks before the string.
    let slashes = 0;
    while (text.charCodeAt(at - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return at;
  }
}

// Most bodies are ASCII, and ASCII is its own Latin-1: a plain copy, faster than decoding UTF-8. Node
// makes a Latin-1 string of a megabyte or more outside V8's heap, though, and V8 collects such strings
// only after 64 MiB more of them: under a load of large uploads that garbage cost 30 MiB of peak RSS.
// Large bodies are therefore decoded into the heap, which V8 collects as it grows.
const EXTERNAL_STRING_BYTES = 1024 * 1024;

/** Decodes and parses the body bytes; undefined for an empty body. */
function parseJson(
  bytes: Buffer,
  bounds: Pick<Limits['requests'], 'maxJsonDepth' | 'maxJsonValues'>,
  maxErrorChars: number,
): { text: string; value: unknown } {
  let text: string;
  try {
    text = bytes.length < EXTERNAL_STRING_BYTES && isAscii(bytes) ? bytes.toString('latin1') : UTF8.decode(bytes);
  } catch {
    throw new ApiError(ERRORS.INVALID_JSON, {
      code: 'invalid_encoding',
      message: 'The request body is not valid UTF-8; send the JSON encoded as UTF-8.',
    });
  }
  if (!text.trim()) return { text, value: undefined };
  const { maxJsonDepth, maxJsonValues } = bounds;
  const broken = brokenBound(text, maxJsonDepth, maxJsonValues);
  if (broken === 'depth') {
    throw new ApiError(ERRORS.INVALID_JSON, {
      code: 'nesting_too_deep',
      message: `The request body nests objects and arrays more than ${maxJsonDepth} levels deep; the limit is ${maxJsonDepth} levels.`,
    });
  }
  if (broken === 'values') {
    throw new ApiError(ERRORS.INVALID_JSON, {
      code: 'too_many_values',
      message: `The request body holds more than ${maxJsonValues} JSON values (objects, arrays, strings, numbers, true, false and null); the limit is ${maxJsonValues} values.`,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ApiError(ERRORS.INVALID_JSON, {
      message: `The request body is not valid JSON: ${(err as Error).message.slice(0, maxErrorChars)}.`,
    });
  }
  // The keys are looked at as parsed, not as written ("__pro\u0074o__" is __proto__ too); only in a text that may
  // hold one, which one search tells (a reviver would cost every body a call per value).
  const forbidden = mayHoldForbiddenKey(text) ? forbiddenKeyAt(value) : undefined;
  if (forbidden !== undefined) {
    // The keys on the way are the client's: cut, as every quote of a request is.
    const at = forbidden.length > maxErrorChars ? `...${forbidden.slice(-maxErrorChars)}` : forbidden;
    throw new ApiError(ERRORS.INVALID_JSON, {
      code: 'forbidden_key',
      param: pointerToParam(at),
      message: `The request body is refused: ${forbiddenKeyMessage(at)}.`,
    });
  }
  return { text, value };
}

/**
 * Room in the body budget for a body of no declared length (chunked) that has grown large: as much as its operation
 * takes, the most it can grow to. Given back when the request ends (state.release); room that comes after the request
 * ended (its client gone while it waited) is given back at once.
 */
function reserveFor(state: RequestState, budget: BodyBudget, limit: number): Promise<void> | undefined {
  const reserved = budget.reserve(limit);
  if (!(reserved instanceof Promise)) {
    state.release = reserved;
    return undefined;
  }
  return reserved.then((release) => {
    if (state.ended) release();
    else state.release = release;
  });
}

/**
 * Reads the JSON body of operations that take one: content type, encoding and size are checked first.
 * `bodyLimit` (the configured one) is the limit of an operation that `requests.maxBodyBytes` does not list
 * lower; `requests` bounds the JSON's depth and values too. `messages` (of fixtures/limits.json): how much of a
 * refused Content-Type, Content-Encoding or JSON parser message the refusal quotes.
 */
export function parseBody(
  bodyLimit: number,
  requests: Pick<Limits['requests'], 'maxJsonDepth' | 'maxJsonValues' | 'maxBodyBytes' | 'largeBodyBytes'>,
  budget: BodyBudget,
  messages: Pick<Limits['messages'], 'maxQuotedChars' | 'maxEncodingChars' | 'maxJsonErrorChars'>,
): Step {
  const limitOf = (id: string): number => Math.min(bodyLimit, requests.maxBodyBytes[id] ?? bodyLimit);
  return async function parseBody(ctx, state) {
    const op = state.operation!;
    if (!op.requestSchema) return;
    const headers = ctx.req.headers;
    const encoding = headers['content-encoding']?.toLowerCase();
    if (encoding && encoding !== 'identity') {
      return new ApiError(ERRORS.UNSUPPORTED_ENCODING, {
        message: `Compressed request bodies are not accepted (Content-Encoding: ${encoding.slice(0, messages.maxEncodingChars)}). Send the JSON uncompressed.`,
      });
    }
    // Node's parser takes a list of codings that ends in chunked and undoes only chunked: what is left (gzip) would be
    // read as if it were the JSON.
    const coding = headers['transfer-encoding'];
    if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked') {
      return new ApiError(ERRORS.UNSUPPORTED_TRANSFER_CODING, {
        message: `Transfer-Encoding '${coding.slice(0, messages.maxEncodingChars)}' is not accepted; the only transfer coding accepted is 'chunked'.`,
      });
    }
    const limit = limitOf(op.id);
    const tooLarge = (size: string) =>
      new ApiError(ERRORS.BODY_TOO_LARGE, {
        message: `The request body is ${size} bytes; the limit is ${limit} bytes for ${op.id}.`,
      });
    const declared = Number(headers['content-length']);
    if (declared > limit) return tooLarge(String(declared));
    const type = headers['content-type'] ?? '';
    if (!JSON_TYPE.test(type)) {
      return new ApiError(ERRORS.UNSUPPORTED_CONTENT_TYPE, {
        message: type
          ? `Content-Type must be 'application/json', but got '${type.slice(0, messages.maxQuotedChars)}'.`
          : "The request has no Content-Type; send 'Content-Type: application/json'.",
      });
    }
    // A large body waits for room in the budget before a byte of it is read; the room is given back when
    // the request is over (serve calls state.release).
    if (declared > 0) {
      const reserved = budget.reserve(declared);
      state.release = reserved instanceof Promise ? await reserved : reserved;
    }
    // A client that sent Expect: 100-continue waits to be told to send its body: told now that every refusal that reads
    // no body has had its turn (route refused any other expectation; HTTP/1.0 has none).
    if (headers.expect !== undefined && ctx.req.httpVersionMinor !== 0 && !ctx.res.headersSent) ctx.res.writeContinue();
    // Only the bytes are read (size limit, Content-Length, aborted uploads); decoding and parsing are
    // done here, strictly.
    const bytes = await readBody(
      ctx.req,
      limit,
      () => tooLarge(`more than ${limit}`),
      declared > 0 ? undefined : { at: requests.largeBodyBytes, wait: () => reserveFor(state, budget, limit) },
    );
    state.large = bytes.length >= requests.largeBodyBytes;
    const { text, value } = parseJson(bytes, requests, messages.maxJsonErrorChars);
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      return new ApiError(ERRORS.BODY_NOT_OBJECT, {
        message: `The request body must be a JSON object, but got ${jsonKind(value)}.`,
      });
    }
    // Handlers derive ids from the exact text of the request.
    state.raw = text;
    state.body = value as Record<string, unknown>;
  };
}
