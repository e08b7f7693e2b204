import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import { ApiError, ERRORS } from '../contract/errors.js';
import { JSON_TYPE, setHeaders, writeJson } from './respond.js';
import type { RequestState } from './steps.js';

/** How a middleware reports an unexpected exception (the logger, once configured). */
export type ErrorSink = (err: unknown, ctx: { method: string; url: string; requestId?: string }) => void;

/** Writes an error as the whole answer: its status, its headers and the envelope, every secret masked. */
function sendError(res: ServerResponse, err: ApiError, mask: (json: string) => string): string {
  res.removeHeader('Content-Disposition');
  setHeaders(res, err.headers);
  const text = mask(err.toJson());
  writeJson(res, err.status, text);
  return text;
}

const unmasked = (json: string): string => json;

/**
 * Answers an error on a response nothing was written to yet (the early key check): the same status,
 * headers, in the same order, and body as beginResponse + sendError give, in one writeHead.
 */
export function sendFirstError(res: ServerResponse, requestId: string, err: ApiError): string {
  const text = err.toJson();
  // Set one by one (not as writeHead's object) so that getHeaders() shows them to the journal, as on Koa's path.
  res.setHeader('x-request-id', requestId);
  res.setHeader('x-content-type-options', 'nosniff');
  for (const name in err.headers) res.setHeader(name, err.headers[name]!);
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.writeHead(err.status);
  res.end(text);
  return text;
}

/**
 * Renders whatever a request threw in the one envelope; anything unexpected is reported and becomes
 * a 500 without a stack trace. Once a response has started, the connection is cut instead. Messages
 * quote what the client sent (a model, a voice, a path, a header value), so `mask` (the server's echo
 * mask) replaces every configured secret in the envelope: this is the one place errors are written.
 */
export function renderError(ctx: Context, state: RequestState, thrown: unknown, report: ErrorSink, mask: (json: string) => string = unmasked): void {
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
  ctx.respond = false;
  state.responseBody = sendError(ctx.res, err, mask);
}
