// Proxying: a request sent to the real upstream, and its answer passed on as a stream (forwardStream.ts) or a
// whole body (forwardBody.ts), judged and recorded on the way.
import type { Context } from 'koa';
import { ApiError, templateForStatus } from '../contract/errors.js';
import { endOf } from '../pipeline/requestEnd.js';
import { STOP, type RequestState, type Step, type StepResult } from '../pipeline/steps.js';
import { forwardBody } from './forwardBody.js';
import { forwardStream } from './forwardStream.js';
import { upstreamHeaders } from './headers.js';
import type { InFlight, Upstream } from './upstream.js';
import type { Judged } from './validation.js';

/** Sends the request upstream and passes its answer on. */
export async function forward(
  up: Upstream,
  ctx: Context,
  state: RequestState,
  validate: Step,
  handle: Step,
): Promise<StepResult> {
  const op = state.operation!;
  const started = performance.now();
  const refused = op.requestSchema ? validate(ctx, state) : undefined;
  let judged: Judged = {
    requestId: state.requestId,
    op,
    method: ctx.method,
    path: ctx.req.url ?? ctx.url,
    body: state.body,
    refusal: refused instanceof ApiError ? refused : undefined,
  };
  const left = new AbortController();
  const onClose = () => left.abort();
  const end = endOf(state, ctx.res);
  end.onClose(onClose);
  const unwatch = () => end.offClose(onClose);
  let res: Response;
  try {
    res = await fetch(up.base + judged.path, {
      method: ctx.method,
      headers: upstreamHeaders(ctx.req.headers, op.auth === 'key' ? up.config.upstreamKey : undefined),
      body: ctx.method === 'GET' || ctx.method === 'HEAD' ? undefined : (state.raw ?? ''),
      redirect: 'manual',
      signal: left.signal,
    });
  } catch (err) {
    unwatch();
    return end.closed ? clientGone(ctx, state) : unreachable(up, err);
  }
  const head = performance.now();
  // A 400 to a body the schema accepts: would the mock refuse it too, by a rule of its own?
  if (!judged.refusal && res.status === 400) judged = { ...judged, unsettled: await mockRefusal(ctx, state, handle) };
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => (headers[name] = value));
  const flight: InFlight = { ctx, state, op, judged, end, started, head, res, headers, unwatch };
  return /^text\/event-stream/i.test(headers['content-type'] ?? '')
    ? forwardStream(up, flight)
    : forwardBody(up, flight);
}

/** The client left while the upstream was called: nothing more is written. */
function clientGone(ctx: Context, state: RequestState): StepResult {
  ctx.respond = false;
  state.transportStatus = 0;
  state.stream = 'aborted';
  return STOP;
}

const unreachable = (up: Upstream, err: unknown): ApiError =>
  new ApiError(templateForStatus(502), {
    code: 'upstream_unreachable',
    message: `The upstream ${up.base} did not answer: ${up.scrub((err as Error).message)}`,
  });

/**
 * The error the mock's own handler answers this request with (a rule of its catalogue, or content it
 * cannot read), or undefined when it would answer it. The handler works on a copy of the request's state:
 * nothing of its answer reaches the client.
 */
async function mockRefusal(ctx: Context, state: RequestState, handle: Step): Promise<ApiError | undefined> {
  try {
    const result = await handle(ctx, { ...state });
    return result instanceof ApiError ? result : undefined;
  } catch (err) {
    return err instanceof ApiError && err.status < 500 ? err : undefined;
  }
}
