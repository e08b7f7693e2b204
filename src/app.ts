import Koa, { type Middleware } from 'koa';
import compose from 'koa-compose';
import { Router } from '@koa/router';
import { Catalogue } from './catalogue.js';
import { loadReplyRules } from './chat/loadRules.js';
import { resolveConfig, type Config, type ConfigInput } from './config.js';
import { ApiError, ERRORS } from './errors.js';
import { keyStates } from './keys.js';
import { loadLimits } from './limits.js';
import { Lru } from './lru.js';
import { authenticate } from './middleware/auth.js';
import { errors, type ErrorSink } from './middleware/errors.js';
import { createFaultState } from './faults/setup.js';
import { faults } from './middleware/faults.js';
import { handle } from './middleware/handle.js';
import { parseBody } from './middleware/parseBody.js';
import { rateLimit } from './middleware/rateLimit.js';
import { requestContext, type RequestObserver } from './middleware/requestContext.js';
import { respond } from './middleware/respond.js';
import { validate } from './middleware/validate.js';
import { operations, pathsOf, type Operation } from './operations.js';
import { SchemaRegistry, strictId } from './schemas.js';
import type { StreamTimers } from './sse.js';
import type { Services, VideoTask } from './types.js';

/** What createApp builds: the Koa app and the services behind it (tests and the admin API use both). */
export interface MockApp {
  readonly app: Koa;
  readonly config: Config;
  readonly services: Services;
}

/** Options that are not configuration: where unexpected errors and finished requests are reported. */
export interface AppHooks {
  readonly report?: ErrorSink;
  readonly observers?: RequestObserver[];
  /** The timers open streams wait on; the server passes ones that run out at shutdown. */
  readonly streamTimers?: StreamTimers;
}

const defaultReport: ErrorSink = (err, where) => console.error('[unified-ai-mock] unexpected error on %s %s: %s', where.method, where.url, (err as Error)?.stack ?? err);

/** Marks which operation a route serves, for the middleware after it. */
const selectOperation = (op: Operation): Middleware =>
  async function selectOperation(ctx, next) {
    ctx.state.operation = op;
    await next();
  };

/** Turns the router's unmatched outcomes into envelope errors: 405 with Allow, else 404. */
const unmatched: Middleware = async function unmatched(ctx, next) {
  await next();
  if (ctx.state.reply || ctx.state.operation) return;
  if (ctx.status === 405) throw new ApiError(ERRORS.METHOD_NOT_ALLOWED, { message: `Method ${ctx.method} is not allowed on ${ctx.path.slice(0, 200)}.`, headers: { Allow: String(ctx.response.get('Allow')) } });
  if (ctx.status === 404 && ctx.body === undefined) throw new ApiError(ERRORS.NOT_FOUND, { message: `Unknown path: ${ctx.method} ${ctx.path.slice(0, 200)}.` });
};

/**
 * Builds the mock: loads and checks schemas, catalogue and rules, then wires the middleware.
 * This is the only place the middleware order is written.
 */
export function createApp(input: ConfigInput = {}, hooks: AppHooks = {}): MockApp {
  const schemas = SchemaRegistry.shared();
  const config = resolveConfig(input, schemas);
  if (config.strict) schemas.prepare(operations.flatMap((op) => (op.requestSchema ? [strictId(op.requestSchema)] : [])));
  const limits = loadLimits();
  const services: Services = {
    config,
    schemas,
    catalogue: new Catalogue(schemas),
    limits,
    now: config.clock === 'system' ? () => Math.floor(Date.now() / 1000) : ((t: number) => () => t)(config.clock),
    media: new Lru<Buffer>(config.mediaCache.entries, config.mediaCache.bytes),
    videoTasks: new Lru<VideoTask>(limits.video.tasksKept),
    keys: keyStates(config.keys),
    ...createFaultState(config, schemas),
    extras: { replyRules: loadReplyRules(schemas, config.replyRules) },
  };

  // Per operation, in order: who is calling, may they, what did they send, is a fault asked for,
  // is the body valid, and the answer.
  const perOperation: Middleware[] = [
    authenticate(services.keys, config.adminToken),
    rateLimit(services),
    parseBody(config.bodyLimit, services.limits.requests.maxJsonDepth),
    faults(services),
    validate(schemas, config.strict, services.limits.requests),
    handle(services),
  ];
  const router = new Router();
  // Paths without parameters are also looked up in a map: most traffic hits them, and the router
  // would otherwise test every route's pattern in turn. Both come from the same table.
  const exact = new Map<string, Middleware>();
  for (const op of operations) {
    const chain = [selectOperation(op), ...perOperation];
    for (const path of pathsOf(op)) {
      router.register(path, [op.method], chain);
      if (!path.includes(':')) exact.set(`${op.method} ${path}`, compose(chain));
    }
  }
  const exactRoute: Middleware = async function exactRoute(ctx, next) {
    const chain = exact.get(`${ctx.method} ${ctx.path}`);
    if (!chain) return next();
    ctx.params = {};
    return chain(ctx, next);
  };

  const app = new Koa();
  app.silent = true; // errors are reported by the errors middleware, never printed with a stack to clients
  app.use(requestContext([...(hooks.observers ?? []), (record) => services.journal.record(record)]));
  app.use(errors(hooks.report ?? defaultReport));
  app.use(respond(config.timeouts.stallMaxMs, hooks.streamTimers));
  app.use(unmatched);
  app.use(exactRoute);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return { app, config, services };
}
