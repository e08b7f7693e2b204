import type { Context } from 'koa';
import type { HandlerRequest } from './handler.js';
import type { KeyState } from '../domain/keys.js';
import type { Reply } from '../contract/reply.js';
import type { Services } from '../domain/services.js';
import type { Step } from './steps.js';
import type { RequestPlan } from './handler.js';

const SAFE_HOST = /^[A-Za-z0-9.-]{1,253}(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](?::\d{1,5})?$/;

/** What a handler receives; the base URL for links is worked out only when a handler reads it. */
class Request implements HandlerRequest {
  constructor(
    readonly body: Record<string, unknown>,
    readonly params: Record<string, string>,
    readonly headers: HandlerRequest['headers'],
    readonly raw: string,
    readonly key: KeyState | undefined,
    readonly services: Services,
    private readonly ctx: Context,
    readonly plan: RequestPlan,
  ) {}

  get baseUrl(): string {
    return baseUrlOf(this.ctx, this.services);
  }
}

/** The base URL for links in a reply to this request: the configured public URL, else the URL the client called. */
export function baseUrlOf(ctx: Context, services: Services): string {
  // The Host header comes from the client: it is used for links only when it is a plain host[:port] that holds no
  // secret;
  // otherwise the port the request came in on (the configured one may be 0, "any free port").
  const host =
    SAFE_HOST.test(ctx.host) && !services.secrets.holds(ctx.host)
      ? ctx.host
      : `${services.config.host}:${ctx.req.socket.localPort ?? services.config.port}`;
  return services.config.publicUrl?.replace(/\/$/, '') ?? `${ctx.protocol}://${host}`;
}

/**
 * Calls the operation's handler with the request's plan (the plan step's) and leaves its reply in state.reply;
 * synchronous when the handler is.
 */
export function handle(services: Services): Step {
  return function handle(ctx, state) {
    const op = state.operation!;
    const plan = state.plan!;
    const reply = op.handler(
      new Request(state.body ?? {}, ctx.params ?? {}, ctx.req.headers, state.raw ?? '', state.key, services, ctx, plan),
    );
    if (!(reply instanceof Promise)) {
      state.reply = reply;
      return;
    }
    return reply.then((r: Reply) => void (state.reply = r));
  };
}
