import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import { resolveConfig, type Config, type ConfigInput } from '../domain/config.js';
import { authenticate } from '../pipeline/auth.js';
import type { ErrorSink } from '../pipeline/errors.js';
import { createServices } from './createServices.js';
import { createRelay, type Relay } from '../relay/relay.js';
import { boundOperations } from './bindings.js';
import { admit } from '../pipeline/admit.js';
import { faults } from '../pipeline/faults.js';
import { handle } from '../pipeline/callHandler.js';
import { plan } from '../pipeline/plan.js';
import { parseBody } from '../pipeline/parseBody.js';
import { rateLimit } from '../pipeline/rateLimit.js';
import type { Reporting, RequestObserver } from '../pipeline/requestContext.js';
import { responder } from '../pipeline/respond.js';
import { route, routeTable } from '../pipeline/route.js';
import { inOrder, type Step } from '../pipeline/steps.js';
import { validate } from '../pipeline/validate.js';
import { operations } from '../contract/operations.js';
import { SchemaRegistry, strictId } from '../contract/schemas.js';
import { Pacer, realTimers, type StreamTimers } from '../pipeline/pacer.js';
import type { Services } from '../domain/services.js';
import { serve } from './serve.js';

/** What createApp builds: the Koa app and the services behind it (tests and the admin API use both). */
export interface MockApp {
  readonly app: Koa;
  readonly config: Config;
  readonly services: Services;
  /** The node:http request handler: the Koa app's. */
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

/**
 * Builds the mock: loads and checks schemas, catalogue and rules, then wires the one middleware and the steps it
 * runs. This is the only place the order of the steps is written (`steps`).
 */
export function createApp(input: ConfigInput = {}, hooks: AppHooks = {}): MockApp {
  const schemas = SchemaRegistry.shared();
  const config = configure(input, schemas);
  const services = createServices(config, schemas);
  if (hooks.logDropped) services.logDropped = hooks.logDropped;
  const report = hooks.report ?? defaultReport;
  // One pacer serves every stream of the app (and the relay's waits): one timer, however many streams.
  const pacer = hooks.streamTimers instanceof Pacer ? hooks.streamTimers : new Pacer(hooks.streamTimers ?? realTimers);
  const relay = createRelay(config, services, schemas, report, pacer);
  const app = new Koa();
  app.silent = true; // errors are rendered by serve, never printed with a stack to clients
  koaWritesOnlyItsAnswers(app);
  app.use(
    serve({
      steps: steps(services, schemas, relay, pacer),
      respond: responder(
        services.limits.records,
        config.timeouts.stallMaxMs,
        pacer,
        config.timeouts.streamMaxMs,
        services.streams,
        services.metrics,
      ),
      reporting: reporting(services, hooks),
      idRule: { maxChars: services.limits.requests.maxRequestIdChars, secrets: services.secrets },
      report,
      mask: services.secrets.json,
      clock: pacer,
    }),
  );
  return { app, config, services, handler: app.callback(), relay };
}

/** Koa's request handler, which callback() calls for every request (not in Koa's types). */
type HandleRequest = (ctx: Koa.Context, fnMiddleware: (ctx: Koa.Context) => Promise<void>) => Promise<void>;

/**
 * Koa's handleRequest watches every response with on-finished (listeners on the response and its socket, with their
 * closures and contexts: about 1.5 KB a request, held by a stream for its seconds), to hand a socket error to
 * ctx.onerror. With the app silent and every other error rendered by serve, that does nothing the mock relies on (a
 * client gone is RequestEnd's), except for an answer Koa writes itself (a step left it on ctx.body). So Koa's own
 * handleRequest runs only for such an answer, after the middleware, as what writes it; the middleware runs first,
 * as Koa runs it. Were a Koa release to have no handleRequest, the app is left as it is.
 */
function koaWritesOnlyItsAnswers(app: Koa): void {
  const koa = app as unknown as { handleRequest?: HandleRequest };
  const handleRequest = koa.handleRequest;
  if (typeof handleRequest !== 'function' || handleRequest.length !== 2) return;
  koa.handleRequest = function (ctx, fnMiddleware) {
    const res = ctx.res;
    res.statusCode = 404; // as Koa begins every answer
    return fnMiddleware(ctx)
      .then(() => {
        if (ctx.respond === false) return;
        // Koa's own path, its middleware done: it sets 404 again, so the status the middleware left is put back.
        const status = res.statusCode;
        return handleRequest.call(this, ctx, () => {
          res.statusCode = status;
          return Promise.resolve();
        });
      })
      .catch((err: unknown) => ctx.onerror(err as Error));
  };
}

/** The configuration resolved and checked, with what a configuration file may not hold. */
function configure(input: ConfigInput, schemas: SchemaRegistry): Config {
  const config = resolveConfig(input, schemas);
  if (config.strict)
    schemas.prepare(operations.flatMap((op) => (op.requestSchema ? [strictId(op.requestSchema)] : [])));
  // The upstream key is never read from a file: a flag, the programmatic option, or the environment.
  if (config.proxy && config.upstreamKey === undefined && process.env.UPSTREAM_API_KEY)
    config.upstreamKey = process.env.UPSTREAM_API_KEY;
  return config;
}

/**
 * The steps of every request, in order: which operation (the exact map, else the router: 404, 405, OPTIONS), who is
 * calling (a missing or wrong key is refused here, before anything else is read), may they (rate limits), what did
 * they send, is a fault asked for, is the body valid, what is decided about it once (its model, pacing and profile: the
 * plan), the answer, and (under a latency profile) the model's slot and the answer's timing. With proxy or replay the relay takes the handler's place (and runs validate itself); relayed and
 * replayed answers keep the timing they were recorded with, so there is no admission.
 */
function steps(services: Services, schemas: SchemaRegistry, relay: Relay | undefined, pacer: Pacer): Step[] {
  const { config } = services;
  // With metrics off, GET /metrics is no route at all (a 404, as on a server that never had one).
  const served = services.metrics ? boundOperations : boundOperations.filter((op) => op.id !== 'metrics');
  const check = validate(schemas, config.strict, services.limits.requests, services.secrets);
  return [
    route(routeTable(served, services.limits.messages.maxPathChars)),
    authenticate(services.keys, config),
    rateLimit(services),
    parseBody(config.bodyLimit, services.limits.requests, services.bodyBudget, services.limits.messages),
    faults(services, pacer),
    ...(relay
      ? [relay.step(check, inOrder(plan(services, false), handle(services)))]
      : [check, plan(services), handle(services), admit(services, pacer)]),
  ];
}

/** Who is told of each finished request: the hooks' observers, /metrics, the journal and the body store. */
function reporting(services: Services, hooks: AppHooks): Reporting {
  const observers: RequestObserver[] = [
    ...(hooks.observers ?? []),
    ...(services.metrics ? [services.metrics.observe] : []),
    (record) => services.journal.record(record),
    (record) => services.responseBodies.keep(record),
  ];
  return { observers, maxModelChars: services.limits.records.maxModelChars };
}
