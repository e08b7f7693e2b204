import { isAscii } from 'node:buffer';
import { ApiError, ERRORS } from '../contract/errors.js';
import type { BodyBudget } from '../domain/bodyBudget.js';
import { readBody } from './readBody.js';
import type { Step } from './steps.js';
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

/** Refuses a `__proto__` key, as the JSON parsers of web frameworks do, so no later merge can be poisoned. */
const noProto = (key: string, value: unknown): unknown => {
  if (key === '__proto__') throw new SyntaxError('the key "__proto__" is not allowed');
  return value;
};

/**
 * True when the JSON text nests objects/arrays deeper than `limit`: one pass that counts brackets outside
 * strings; invalid JSON is left for JSON.parse to report. A string is skipped with indexOf, at native
 * speed: a base64 image is one multi-megabyte string, and a character-by-character loop over it cost
 * more than parsing it.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  // Each level needs its own bracket, so shorter texts cannot nest too deep.
  if (text.length <= limit) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = closingQuote(text, i);
      if (i < 0) return false; // an unterminated string
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

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
function parseJson(bytes: Buffer, maxDepth: number, maxErrorChars: number): { text: string; value: unknown } {
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
  if (nestsDeeperThan(text, maxDepth)) {
    throw new ApiError(ERRORS.INVALID_JSON, {
      code: 'nesting_too_deep',
      message: `The request body nests objects and arrays more than ${maxDepth} levels deep; the limit is ${maxDepth} levels.`,
    });
  }
  try {
    return { text, value: JSON.parse(text, text.includes('__proto__') ? noProto : undefined) };
  } catch (err) {
    throw new ApiError(ERRORS.INVALID_JSON, {
      message: `The request body is not valid JSON: ${(err as Error).message.slice(0, maxErrorChars)}.`,
    });
  }
}

/**
 * Reads the JSON body of operations that take one: content type, encoding and size are checked first.
 * `messages` (of fixtures/limits.json): how much of a refused Content-Type, Content-Encoding or JSON
 * parser message the refusal quotes.
 */
export function parseBody(
  limitBytes: number,
  maxDepth: number,
  budget: BodyBudget,
  messages: Pick<Limits['messages'], 'maxQuotedChars' | 'maxEncodingChars' | 'maxJsonErrorChars'>,
): Step {
  return async function parseBody(ctx, state) {
    if (!state.operation!.requestSchema) return;
    const headers = ctx.req.headers;
    const encoding = headers['content-encoding']?.toLowerCase();
    if (encoding && encoding !== 'identity') {
      return new ApiError(ERRORS.UNSUPPORTED_ENCODING, {
        message: `Compressed request bodies are not accepted (Content-Encoding: ${encoding.slice(0, messages.maxEncodingChars)}). Send the JSON uncompressed.`,
      });
    }
    const declared = Number(headers['content-length']);
    if (declared > limitBytes)
      return new ApiError(ERRORS.BODY_TOO_LARGE, {
        message: `The request body is ${declared} bytes; the limit is ${limitBytes} bytes.`,
      });
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
    // Only the bytes are read (size limit, Content-Length, aborted uploads); decoding and parsing are
    // done here, strictly.
    const { text, value } = parseJson(await readBody(ctx.req, limitBytes), maxDepth, messages.maxJsonErrorChars);
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
