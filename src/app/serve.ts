import type { ServerResponse } from 'node:http';
import type { Context, Middleware } from 'koa';
import { REQUEST_ID } from '../lib/symbols.js';
import { renderError, type ErrorSink } from '../pipeline/errors.js';
import {
  beginResponse,
  endRequest,
  openHead,
  requestIdFor,
  type IdRule,
  type Reporting,
} from '../pipeline/requestContext.js';
import { RequestEnd } from '../pipeline/requestEnd.js';
import { STREAMING, type Respond } from '../pipeline/respond.js';
import { requestState, runSteps, type RequestState, type Step } from '../pipeline/steps.js';

/** What `serve` runs, made once per app by createApp. */
export interface Lifecycle {
  /** The steps every request takes, in order (the route first, then the operation's steps). */
  readonly steps: readonly Step[];
  /** Writes the reply the steps left (pipeline/respond.ts). */
  readonly respond: Respond;
  /** Who is told of each finished request. */
  readonly reporting: Reporting;
  /** When a client's x-request-id is echoed. */
  readonly idRule: IdRule;
  /** Where an unexpected error is reported, and the mask over every error envelope. */
  readonly report: ErrorSink;
  readonly mask: (json: string) => string;
  /** The stream timers' clock: a stream's time to first token runs from the request's arrival on it. */
  readonly clock: { now(): number };
}

/**
 * The one middleware: every request, in order, is begun (its id, the headers every answer carries, its end), goes
 * through the steps (the route, then the operation's), has its reply written or its refusal rendered in the one
 * envelope, and is finished (the record, once). Koa writes only an answer a step left on `ctx.body` (a binary
 * body, the router's answer to OPTIONS); every other answer is written by its own writer in one go, or there is
 * none (a dropped connection, a client gone).
 */
export function serve(lifecycle: Lifecycle): Middleware {
  const { steps, respond, report, mask, reporting } = lifecycle;
  // A stream is finished by its writer when it ends (STREAMING): this function's frame, Koa's promises and what the
  // steps left in them are let go while it runs, rather than held for its seconds by every open stream.
  // Called by the stream's writer, not in this function's try: what goes wrong there is reported, as it is here.
  const ended = (ctx: Context, state: RequestState) => {
    try {
      finish(ctx, state, reporting);
    } catch (thrown) {
      report(thrown, { method: ctx.method, url: ctx.url, requestId: state.requestId });
    }
  };
  return async function serve(ctx) {
    const state = begin(ctx, lifecycle);
    let streaming = false;
    try {
      const refused = await runSteps(steps, ctx, state);
      if (refused) renderError(ctx, state, refused, report, mask);
      else {
        const answered = respond(ctx, state, ended);
        if (answered === STREAMING) streaming = true;
        else await answered;
      }
    } catch (thrown) {
      renderError(ctx, state, thrown, report, mask);
    } finally {
      if (!streaming) finish(ctx, state, reporting);
    }
  };
}

/** A request's start: its state, with its id, arrival, end and the headers every answer carries. */
function begin(ctx: Context, { idRule, clock }: Lifecycle): RequestState {
  const state = requestState(requestIdFor(ctx.req.headers['x-request-id'], idRule), undefined, performance.now());
  ctx.state = state;
  state.arrived = clock.now();
  (ctx.res as ServerResponse & { [REQUEST_ID]?: string })[REQUEST_ID] = state.requestId;
  state.end = new RequestEnd(ctx.res);
  beginResponse(state);
  return state;
}

/** A request's end: Koa told whether it writes the answer, and the request's one record. */
function finish(ctx: Context, state: RequestState, reporting: Reporting): void {
  if (ctx.body === undefined) ctx.respond = false;
  // An answer Koa writes after this (or none, the connection gone) carries the request's headers too.
  if (!ctx.res.headersSent) openHead(ctx.res, state);
  endRequest(reporting, ctx.req, state.path ?? ctx.path, state, ctx.status, state.started, ctx.res);
}
