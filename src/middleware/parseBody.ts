import type { Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import { ApiError, ERRORS } from '../errors.js';
import type { Operation } from '../operations.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** Reads the JSON body of operations that take one: content type, encoding and size are checked first. */
export function parseBody(limitBytes: number): Middleware {
  const parser = bodyParser({ enableTypes: ['json'], jsonLimit: String(limitBytes), strict: true });
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
    await parser(ctx, async () => {
      const body = ctx.request.body as unknown;
      if (!body || typeof body !== 'object' || Array.isArray(body)) {
        throw new ApiError(ERRORS.BODY_NOT_OBJECT, { message: `The request body must be a JSON object, but got ${Array.isArray(body) ? 'an array' : 'nothing'}.` });
      }
      ctx.state.body = body;
      await next();
    });
  };
}
