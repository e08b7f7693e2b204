import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa, { type Middleware } from 'koa';
import { resolveConfig, type Config, type ConfigInput } from '../domain/config.js';
import { ApiError } from '../contract/errors.js';
import { authenticate, checkKey } from '../pipeline/auth.js';
import { renderError, sendError, type ErrorSink } from '../pipeline/errors.js';
import { createServices } from './createServices.js';
import { createRelay, type Relay } from '../relay/relay.js';
import { boundOperations } from './bindings.js';
import { admit } from '../pipeline/admit.js';
import { faults } from '../pipeline/faults.js';
import { handle } from '../pipeline/handle.js';
import { parseBody } from '../pipeline/parseBody.js';
import { rateLimit } from '../pipeline/rateLimit.js';
import {
  beginResponse,
  endRequest,
  openHead,
  requestIdFor,
  type IdRule,
  type Reporting,
  type RequestObserver,
} from '../pipeline/requestContext.js';
import { responder } from '../pipeline/respond.js';
import { pathOfUrl, routeTable } from '../pipeline/route.js';
import { RequestEnd } from '../pipeline/requestEnd.js';
import { requestState, runSteps, type Step } from '../pipeline/steps.js';
import { validate } from '../pipeline/validate.js';
import { operations } from '../contract/operations.js';
import type { BoundOperation as Operation } from '../pipeline/handler.js';
import { SchemaRegistry, strictId } from '../contract/schemas.js';
import { Pacer, realTimers, type StreamTimers } from '../pipeline/pacer.js';
import type { KeyState } from '../domain/keys.js';
import type { Services } from '../domain/services.js';

/** What createApp builds: the Koa app and the services behind it (tests and the admin API use both). */
export interface MockApp {
  readonly app: Koa;
  readonly config: Config;
  readonly services: Services;
  /**
   * The node:http request handler: a missing or wrong API key on a known path is answered at once,
   * without building a Koa context; every other request goes to the Koa app.
   */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** With `proxy` or `replay`: the relay that answers the API's operations (its counters, report, close). */
  readonly relay: Relay | undefined;
}

/** Options that are not configuration: where unexpected errors and finished requests are reported. */
export interface AppHooks {
  readonly report?: ErrorSink;
  readonly observers?: RequestObserver[];
  /** The timers open streams wait on; start() runs them on these (tests bring a clock they move), and runs out their
   * waits at shutdown; it also times the linger of unread bodies with them. */
  readonly streamTimers?: StreamTimers;
  /** How many log lines the log's destination has dropped so far (a number when it counts them), for /__health. */
  readonly logDropped?: () => unknown;
}

const defaultReport: ErrorSink = (err, where) =>
  console.error(
    '[unified-ai-mock] unexpected error on %s %s: %s',
    where.method,
    where.url,
    (err as Error)?.stack ?? err,
  );

/** What the early key check found out about a request it passed on to Koa. */
interface Checked {
  readonly op: Operation;
  readonly key: KeyState;
  readonly path: string;
  readonly started: number;
}
const CHECKED = Symbol('checked');
type CheckedRequest = IncomingMessage & { [CHECKED]?: Checked };

/**
 * Builds the mock: loads and checks schemas, catalogue and rules, then wires the middleware.
 * This is the only place the middleware order is written.
 */
export function createApp(input: ConfigInput = {}, hooks: AppHooks = {}): MockApp {
  const schemas = SchemaRegistry.shared();
  const config = resolveConfig(input, schemas);
  if (config.strict)
    schemas.prepare(operations.flatMap((op) => (op.requestSchema ? [strictId(op.requestSchema)] : [])));
  // The upstream key is never read from a file: a flag, the programmatic option, or the environment.
  if (config.proxy && config.upstreamKey === undefined && process.env.UPSTREAM_API_KEY)
    config.upstreamKey = process.env.UPSTREAM_API_KEY;
  const services = createServices(config, schemas);
  if (hooks.logDropped) services.logDropped = hooks.logDropped;
  const report = hooks.report ?? defaultReport;
  // With proxy or replay, the relay takes the handler's place (and runs validate itself): faults and
  // rate limits still run before it, and operations it does not relay still get validate then handle.
  // One pacer serves every stream of the app (and the relay's waits): one timer, however many streams.
  const pacer = hooks.streamTimers instanceof Pacer ? hooks.streamTimers : new Pacer(hooks.streamTimers ?? realTimers);
  const relay = createRelay(config, services, schemas, report, pacer);
  const check = validate(schemas, config.strict, services.limits.requests, services.secrets);

  // Per operation, in order: who is calling, may they, what did they send, is a fault asked for,
  // is the body valid, the answer, and (under a latency profile) the model's slot and the answer's timing.
  // Relayed and replayed answers keep the timing they were recorded with: with a relay there is no admission.
  const perOperation: Step[] = [
    authenticate(services.keys, config),
    rateLimit(services),
    parseBody(config.bodyLimit, services.limits.requests, services.bodyBudget, services.limits.messages),
    faults(services, pacer),
    ...(relay ? [relay.step(check, handle(services))] : [check, handle(services), admit(services, pacer)]),
  ];
  const respond = responder(
    services.limits.records,
    config.timeouts.stallMaxMs,
    pacer,
    config.timeouts.streamMaxMs,
    services.streams,
    services.metrics,
  );
  // With metrics off, GET /metrics is no route at all (a 404, as on a server that never had one).
  const served = services.metrics ? boundOperations : boundOperations.filter((op) => op.id !== 'metrics');
  const routes = routeTable(served, services.limits.messages.maxPathChars);
  const observers: RequestObserver[] = [
    ...(hooks.observers ?? []),
    ...(services.metrics ? [services.metrics.observe] : []),
    (record) => services.journal.record(record),
    (record) => services.responseBodies.keep(record),
  ];
  const reporting: Reporting = { observers, maxModelChars: services.limits.records.maxModelChars };
  const idRule: IdRule = { maxChars: services.limits.requests.maxRequestIdChars, secrets: services.secrets };

  // Every request, in order: its id and security headers (requestContext), the error envelope around
  // everything after (errors), the operation (exact map, else the router: 404 or 405), the per-operation
  // steps, the reply (respond), and finally the record for the journal and the log.
  const serve: Middleware = async function serve(ctx) {
    const checked = (ctx.req as CheckedRequest)[CHECKED];
    const started = checked?.started ?? performance.now();
    const state = (ctx.state = requestState(
      requestIdFor(ctx.req.headers['x-request-id'], idRule),
      checked?.op,
      checked?.key,
    ));
    state.arrived = pacer.now();
    state.end = new RequestEnd(ctx.res);
    beginResponse(state);
    let path = checked?.path;
    try {
      if (!checked) {
        const raw = pathOfUrl(ctx.url);
        state.operation = routes.exact(ctx.method, raw);
        if (state.operation) path = raw;
        else {
          // The router writes headers of its own (Allow): the request's go first, as on every answer.
          openHead(ctx.res, state);
          state.operation = await routes.match(ctx);
        }
      }
      if (state.operation) {
        const refused = await runSteps(perOperation, ctx, state);
        if (refused) renderError(ctx, state, refused, report, services.secrets.json);
        else await respond(ctx, state);
      }
    } catch (thrown) {
      renderError(ctx, state, thrown, report, services.secrets.json);
    } finally {
      // An answer Koa writes after this (or none, the connection gone) carries the request's headers too.
      if (!ctx.res.headersSent) openHead(ctx.res, state);
      endRequest(reporting, ctx.req, path ?? ctx.path, state, ctx.status, started, ctx.res);
    }
  };

  const app = new Koa();
  app.silent = true; // errors are rendered by serve, never printed with a stack to clients
  app.use(serve);
  const koa = app.callback();

  /**
   * Answers a request refused by the key check without Koa. It repeats, in this order, what a request
   * refused by the authenticate step goes through in Koa's lifecycle and serve:
   * 1. serve's start: the request id (requestIdFor) and the headers every answer carries (beginResponse);
   * 2. what renderError does for an ApiError there: the envelope and its headers, in one writeHead and
   *    end (sendError); Koa's own respond is turned off for it there (ctx.respond = false), so Koa adds
   *    nothing to the answer but what it did to the response before serve ran;
   * 3. serve's finally: the record for the journal and the log (endRequest), an observer's failure
   *    reported as Koa's error path reports one.
   * It skips what such a request never needs: the Koa context, the route lookup Koa would redo, the
   * steps after the key check. test/app/createApp.test.ts compares its answers and records with Koa's,
   * byte for byte, so that a Koa release that changes its lifecycle (headers it adds, the status it
   * leaves) fails there.
   */
  const refuseBeforeKoa = (
    req: IncomingMessage,
    res: ServerResponse,
    op: Operation,
    path: string,
    err: ApiError,
    started: number,
  ): void => {
    const state = requestState(requestIdFor(req.headers['x-request-id'], idRule), op, undefined, err);
    beginResponse(state);
    state.responseBody = sendError(res, state, err);
    try {
      endRequest(reporting, req, path, state, err.status, started, res);
    } catch (thrown) {
      report(thrown, { method: req.method ?? '', url: req.url ?? '', requestId: state.requestId });
    }
  };

  // The key check is the first step of every keyed operation, so a request with a missing or wrong key
  // can be answered before Koa builds a context: the same envelope, headers and record, at a fraction
  // of the cost. A request that passes goes on to Koa with its operation and key.
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    const url = req.url ?? '';
    const path = pathOfUrl(url);
    const op = url.startsWith('/') ? routes.exact(req.method ?? '', path) : undefined;
    if (op?.auth === 'key') {
      const key = checkKey(services.keys, req.headers.authorization);
      if (key instanceof ApiError) return refuseBeforeKoa(req, res, op, path, key, started);
      (req as CheckedRequest)[CHECKED] = { op, key, path, started };
    }
    void koa(req, res);
  };
  return { app, config, services, handler, relay };
}
