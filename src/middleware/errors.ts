import type { Middleware } from 'koa';
import { ApiError, ERRORS } from '../errors.js';

/** How a middleware reports an unexpected exception (the logger, once configured). */
export type ErrorSink = (err: unknown, ctx: { method: string; url: string; requestId?: string }) => void;

/** Maps errors thrown by the body parser (co-body / raw-body) to the error table. */
function fromParser(err: { status?: number; type?: string; message?: string }): ApiError | undefined {
  switch (err.type) {
    case 'entity.too.large':
      return new ApiError(ERRORS.BODY_TOO_LARGE);
    case 'entity.parse.failed':
      return new ApiError(ERRORS.INVALID_JSON, { message: `The request body is not valid JSON: ${err.message ?? 'parse error'}.` });
    case 'request.size.invalid':
      return new ApiError(ERRORS.INVALID_JSON, { code: 'invalid_content_length', message: 'The request body does not match its Content-Length.' });
    case 'request.aborted':
      return new ApiError(ERRORS.INVALID_JSON, { code: 'request_aborted', message: 'The request body was cut off before its end.' });
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new ApiError(ERRORS.UNSUPPORTED_ENCODING, { message: `Unsupported body encoding: ${err.message ?? ''}`.trim() });
    default:
      return undefined;
  }
}

/** Renders every error in the one envelope; anything unexpected becomes a 500 without a stack trace. */
export function errors(report: ErrorSink): Middleware {
  return async function errors(ctx, next) {
    try {
      await next();
    } catch (thrown) {
      let err = thrown instanceof ApiError ? thrown : fromParser(thrown as { type?: string });
      if (!err) {
        report(thrown, { method: ctx.method, url: ctx.url, requestId: ctx.state.requestId as string | undefined });
        err = new ApiError(ERRORS.INTERNAL);
      }
      if (ctx.headerSent || !ctx.writable) {
        if (!ctx.headerSent) ctx.state.transportStatus = 0; // the client left before any answer: the log must not say 404
        ctx.res.destroy(); // a stream already started: the only honest signal left is to cut it
        return;
      }
      ctx.state.error = err;
      ctx.remove('Content-Disposition');
      ctx.status = err.status;
      ctx.set(err.headers);
      ctx.type = 'application/json';
      ctx.body = JSON.stringify(err.toBody());
    }
  };
}
