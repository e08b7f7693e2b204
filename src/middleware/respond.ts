import type { Middleware } from 'koa';
import { writeSse, type StreamTimers } from '../sse.js';
import type { Reply } from '../types.js';

/** Writes the reply a handler left in ctx.state.reply: JSON, binary or a server-sent event stream. */
export function respond(stallMaxMs: number, timers?: StreamTimers): Middleware {
  return async function respond(ctx, next) {
    await next();
    const reply = ctx.state.reply as Reply | undefined;
    if (!reply) return;
    if (reply.headers) ctx.set(reply.headers);
    switch (reply.kind) {
      case 'json':
        ctx.status = reply.status ?? 200;
        ctx.type = 'application/json';
        ctx.body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
        return;
      case 'binary':
        ctx.status = 200;
        ctx.type = reply.contentType;
        ctx.body = reply.body;
        return;
      case 'sse': {
        ctx.respond = false; // Koa hands the socket to the stream writer
        ctx.status = 200;
        ctx.res.writeHead(200, {
          ...(ctx.response.headers as Record<string, string>),
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
        });
        // Send the head now: otherwise it waits for the first event, and a long time to first token
        // would look like a server that does not answer at all.
        ctx.res.flushHeaders();
        ctx.state.stream = await writeSse(ctx.res, reply, stallMaxMs, timers);
      }
    }
  };
}
