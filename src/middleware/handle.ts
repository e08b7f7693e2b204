import type { Middleware } from 'koa';
import type { Operation } from '../operations.js';
import type { KeyState, Services } from '../types.js';

const SAFE_HOST = /^[A-Za-z0-9.-]{1,253}(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](?::\d{1,5})?$/;

/** Calls the operation's handler and leaves its reply for the respond middleware. */
export function handle(services: Services): Middleware {
  return async function handle(ctx) {
    const op = ctx.state.operation as Operation;
    // The Host header comes from the client: it is used for links only when it is a plain host[:port];
    // otherwise the port the request came in on (the configured one may be 0, "any free port").
    const host = SAFE_HOST.test(ctx.host) ? ctx.host : `${services.config.host}:${ctx.req.socket.localPort ?? services.config.port}`;
    const base = services.config.publicUrl?.replace(/\/$/, '') ?? `${ctx.protocol}://${host}`;
    ctx.state.reply = await op.handler({
      body: (ctx.state.body as Record<string, unknown>) ?? {},
      params: ctx.params ?? {},
      headers: ctx.headers,
      raw: ((ctx.request as { rawBody?: string }).rawBody as string | undefined) ?? '',
      key: ctx.state.key as KeyState | undefined,
      baseUrl: base,
      services,
    });
  };
}
