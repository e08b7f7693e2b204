import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

/** What is known about one finished request; observers (journal, log) receive it. */
export interface RequestRecord {
  readonly requestId: string;
  readonly time: number;
  readonly method: string;
  readonly path: string;
  readonly operation: string | undefined;
  readonly keyLabel: string | undefined;
  readonly status: number;
  readonly latencyMs: number;
  readonly errorCode: string | null | undefined;
  readonly details: readonly unknown[] | undefined;
  readonly fault: string | undefined;
  readonly stream: string | undefined;
  readonly retryCount: number | undefined;
  readonly model: string | undefined;
}

/** Something that wants to see each finished request. */
export type RequestObserver = (record: RequestRecord) => void;

// An incoming id is kept only when it is plainly safe to echo; anything else is replaced.
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Gives every response an x-request-id and security headers, and reports each finished request. */
export function requestContext(observers: readonly RequestObserver[]): Middleware {
  return async function requestContext(ctx, next) {
    const started = performance.now();
    const incoming = ctx.get('x-request-id');
    const requestId = SAFE_ID.test(incoming) ? incoming : `req_${randomUUID().replaceAll('-', '')}`;
    ctx.state.requestId = requestId;
    ctx.set('x-request-id', requestId);
    ctx.set('x-content-type-options', 'nosniff');
    try {
      await next();
    } finally {
      if (observers.length) {
        const retry = Number.parseInt(ctx.get('x-stainless-retry-count'), 10);
        const body = ctx.state.body as { model?: unknown } | undefined;
        const record: RequestRecord = {
          requestId,
          time: Date.now(),
          method: ctx.method,
          path: ctx.path,
          operation: (ctx.state.operation as { id: string } | undefined)?.id,
          keyLabel: (ctx.state.key as { masked: string } | undefined)?.masked,
          status: ctx.state.transportStatus ?? ctx.status,
          latencyMs: Math.round((performance.now() - started) * 100) / 100,
          errorCode: (ctx.state.error as { code?: string | null } | undefined)?.code,
          details: (ctx.state.error as { details?: unknown[] } | undefined)?.details,
          fault: ctx.state.fault as string | undefined,
          stream: ctx.state.stream as string | undefined,
          retryCount: Number.isFinite(retry) ? retry : undefined,
          model: typeof body?.model === 'string' ? body.model.slice(0, 128) : undefined,
        };
        for (const observe of observers) observe(record);
      }
    }
  };
}
