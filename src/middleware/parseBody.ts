import type { Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import { ApiError, ERRORS } from '../errors.js';
import type { Operation } from '../operations.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

// Fatal: bytes that are not UTF-8 are an error, never silently replaced by U+FFFD.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

const jsonKind = (v: unknown): string =>
  v === undefined ? 'an empty body' : v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;

/** Refuses a `__proto__` key, as the JSON parsers of web frameworks do, so no later merge can be poisoned. */
const noProto = (key: string, value: unknown): unknown => {
  if (key === '__proto__') throw new SyntaxError('the key "__proto__" is not allowed');
  return value;
};

/**
 * True when the JSON text nests objects/arrays deeper than `limit`: one pass with charCodeAt that skips strings
 * (and the escapes inside them); invalid JSON is left for JSON.parse to report.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  // Each level needs its own bracket, so shorter texts cannot nest too deep.
  if (text.length <= limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next character is escaped, even a quote
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Decodes and parses the body bytes; undefined for an empty body. */
function parseJson(bytes: Buffer, maxDepth: number): { text: string; value: unknown } {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new ApiError(ERRORS.INVALID_JSON, { code: 'invalid_encoding', message: 'The request body is not valid UTF-8; send the JSON encoded as UTF-8.' });
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
    throw new ApiError(ERRORS.INVALID_JSON, { message: `The request body is not valid JSON: ${(err as Error).message.slice(0, 120)}.` });
  }
}

/** Reads the JSON body of operations that take one: content type, encoding and size are checked first. */
export function parseBody(limitBytes: number, maxDepth: number): Middleware {
  // The parser only reads the bytes (size limit, Content-Length, aborted uploads: errors with their own
  // type, mapped by the errors middleware); decoding and parsing are done here, strictly.
  // `encoding: false` (passed on to raw-body, missing from the typings) keeps the raw bytes: a Buffer.
  const options: bodyParser.Options & { encoding: false } = {
    enableTypes: ['text'],
    extendTypes: { text: ['*/*'] }, // the Content-Type was checked before
    textLimit: String(limitBytes),
    encoding: false,
  };
  const reader = bodyParser(options);
  return async function parseBody(ctx, next) {
    const op = ctx.state.operation as Operation;
    if (!op.requestSchema) return next();
    const encoding = ctx.get('content-encoding').toLowerCase();
    if (encoding && encoding !== 'identity') {
      throw new ApiError(ERRORS.UNSUPPORTED_ENCODING, { message: `Compressed request bodies are not accepted (Content-Encoding: ${encoding.slice(0, 32)}). Send the JSON uncompressed.` });
    }
    const declared = Number(ctx.get('content-length'));
    if (declared > limitBytes) throw new ApiError(ERRORS.BODY_TOO_LARGE, { message: `The request body is ${declared} bytes; the limit is ${limitBytes} bytes.` });
    const type = ctx.get('content-type');
    if (!JSON_TYPE.test(type)) {
      throw new ApiError(ERRORS.UNSUPPORTED_CONTENT_TYPE, {
        message: type ? `Content-Type must be 'application/json', but got '${type.slice(0, 64)}'.` : "The request has no Content-Type; send 'Content-Type: application/json'.",
      });
    }
    await reader(ctx, async () => {
      const raw = ctx.request.body;
      const { text, value } = parseJson(Buffer.isBuffer(raw) ? raw : Buffer.alloc(0), maxDepth);
      // Handlers derive ids from the exact text of the request.
      (ctx.request as { rawBody?: string }).rawBody = text;
      ctx.request.body = value;
      if (!value || typeof value !== 'object' || Array.isArray(value)) {
        throw new ApiError(ERRORS.BODY_NOT_OBJECT, { message: `The request body must be a JSON object, but got ${jsonKind(value)}.` });
      }
      ctx.state.body = value;
      await next();
    });
  };
}
