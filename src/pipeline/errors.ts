import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import { ApiError, ERRORS } from '../contract/errors.js';
import { addHeader, takeHead } from './requestContext.js';
import { writeJson } from './respond.js';
import type { RequestState } from './steps.js';

/** Where an unexpected exception is reported (the logger, once configured): by serve and renderError, and by the
 * relay and the server for errors of their own. */
export type ErrorSink = (err: unknown, ctx: { method: string; url: string; requestId?: string }) => void;

const unmasked = (json: string): string => json;

/**
 * Writes an error as the whole answer: its status, its headers and the envelope, every secret masked.
 * Returns the text written.
 */
export function sendError(
  res: ServerResponse,
  state: RequestState,
  err: ApiError,
  mask: (json: string) => string = unmasked,
): string {
  res.removeHeader('Content-Disposition');
  for (const name in err.headers) addHeader(res, state, name, err.headers[name]!);
  const text = mask(err.toJson());
  writeJson(res, err.status, text, takeHead(state));
  return text;
}

/**
 * Renders whatever a request threw in the one envelope; anything unexpected is reported and becomes
 * a 500 without a stack trace. Once a response has started, the connection is cut instead. Messages
 * quote what the client sent (a model, a voice, a path, a header value), so `mask` (the server's echo
 * mask) replaces every configured secret in the envelope: this is the one place errors are written.
 */
export function renderError(
  ctx: Context,
  state: RequestState,
  thrown: unknown,
  report: ErrorSink,
  mask: (json: string) => string = unmasked,
): void {
  let err = thrown instanceof ApiError ? thrown : undefined;
  if (!err) {
    report(thrown, { method: ctx.method, url: ctx.url, requestId: state.requestId });
    err = new ApiError(ERRORS.INTERNAL);
  }
  if (ctx.headerSent || !ctx.writable) {
    if (!ctx.headerSent) state.transportStatus = 0; // the client left before any answer: the log must not say 404
    ctx.res.destroy(); // a stream already started: the only honest signal left is to cut it
    return;
  }
  state.error = err;
  state.responseBody = sendError(ctx.res, state, err, mask);
}
