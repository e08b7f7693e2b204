// Replay: the answer of a recorded exchange (a cassette), with its recorded timing, or the fallback when none.
import type { Context } from 'koa';
import { ApiError, ERRORS } from '../contract/errors.js';
import { EventList, type Reply } from '../contract/reply.js';
import type { Config } from '../domain/config.js';
import type { Services } from '../domain/services.js';
import { baseUrlOf } from '../pipeline/callHandler.js';
import type { Step } from '../pipeline/steps.js';
import { isText, normaliseRequest, requestHash, type Cassette, type CassetteStore } from './cassette.js';
import { rewriteLinks } from './headers.js';
import { mockAnswer, relayed } from './scope.js';

/** Requests answered from a cassette, and requests that had none. */
export interface ReplayCounts {
  replayed: number;
  misses: number;
}

/** The replay step: a cassette's answer, else the fallback (a 404 naming the hash, or the mock's own answer). */
export function replayStep(
  store: CassetteStore,
  config: Config,
  services: Services,
  counts: ReplayCounts,
  validate: Step,
  handle: Step,
): Step {
  return async function replay(ctx, state) {
    const op = state.operation!;
    if (!relayed(op)) return mockAnswer(validate, handle, ctx, state);
    const hash = requestHash(normaliseRequest(op, ctx.method, ctx.req.url ?? ctx.url, ctx.req.headers, state.body));
    const cassette = await store.read(op.id, hash);
    if (!cassette) {
      counts.misses++;
      if (config.replayFallback === 'mock') return mockAnswer(validate, handle, ctx, state);
      return missing(op.id, hash, store.dir);
    }
    counts.replayed++;
    state.reply = cassette.response.events
      ? replayedStream(cassette.response, config)
      : await replayedBody(cassette, store, ctx, services);
  };
}

/** The 404 of a request no cassette answers, saying how to record one. */
function missing(operation: string, hash: string, dir: string): ApiError {
  // A media link is in a recorded answer, but its bytes are only recorded when a client fetched them through the
  // proxy: most tests never download the image or video they are given.
  const message = operation.startsWith('media.')
    ? `No cassette for this media file (hash ${hash}) in ${dir}: the answer that links to it was recorded, but no client downloaded the file through the proxy while recording, and only what a client fetched is recorded. Download the link during the recording, or let the mock make the file with '--replay-fallback mock'.`
    : `No cassette for this ${operation} request (hash ${hash}) in ${dir}. Record it against a real upstream with 'npx unified-ai-mock serve --proxy URL --record ${dir}', or let the mock answer with '--replay-fallback mock'.`;
  return new ApiError(ERRORS.NOT_FOUND, { code: 'cassette_not_found', message, headers: { 'x-mock-cassette': hash } });
}

/** The headers of a recorded answer as replayed: the reply's kind sets the Content-Type. */
function replayedHeaders(r: Cassette['response']): Record<string, string> {
  const headers: Record<string, string> = { ...r.headers };
  delete headers['content-type'];
  return headers;
}

/** A recorded stream, timed as it was recorded (or at `replayTps`), ending as it ended. */
function replayedStream(r: Cassette['response'], config: Config): Reply {
  const recorded = r.events!;
  const done = recorded.at(-1)?.data === '[DONE]';
  const events = new EventList((done ? recorded.slice(0, -1) : recorded).map((e) => ({ data: e.data, tokens: 1 })));
  const t0 = recorded[0]?.t ?? 0;
  const schedule = [...recorded.map((e) => e.t - t0), ...(done ? [] : [(r.endMs ?? recorded.at(-1)?.t ?? t0) - t0])];
  return {
    kind: 'sse',
    events,
    ending: done ? 'done' : 'cut',
    stopAfter: events.length,
    pacing: { timeToFirstTokenMs: t0, tokensPerSecond: config.replayTps ?? 0 },
    ...(config.replayTps ? {} : { schedule }),
    headers: replayedHeaders(r),
  };
}

/** A recorded body, its links to the upstream turned into links to this mock. */
async function replayedBody(
  cassette: Cassette,
  store: CassetteStore,
  ctx: Context,
  services: Services,
): Promise<Reply> {
  const r = cassette.response;
  const type = r.headers['content-type'];
  const bytes = r.body ? await store.bodyBytes(r.body) : Buffer.alloc(0);
  return {
    kind: 'binary',
    status: r.status,
    contentType: type ?? '',
    body: isText(type) ? rewriteLinks(bytes, cassette.upstream, baseUrlOf(ctx, services)) : bytes,
    headers: replayedHeaders(r),
  };
}
