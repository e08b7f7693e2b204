// Proxy, record and replay: the answer of the API's operations from a real implementation or from cassettes.
// It takes the handler's place in the steps (createApp), so authentication, rate limits, body parsing and
// faults run before it as they do before any handler.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { ApiError, ERRORS, templateForStatus } from '../contract/errors.js';
import { EventList } from '../contract/reply.js';
import type { Operation } from '../contract/operations.js';
import type { SchemaRegistry } from '../contract/schemas.js';
import { ConfigError, type Config } from '../domain/config.js';
import type { Violation } from '../domain/journal.js';
import { configSecrets, secretScrubber } from '../domain/secrets.js';
import type { ErrorSink } from '../pipeline/errors.js';
import { baseUrlOf } from '../pipeline/callHandler.js';
import { openHead } from '../pipeline/requestContext.js';
import { realTimers, type StreamTimers } from '../pipeline/pacer.js';
import { endOf, type RequestEnd } from '../pipeline/requestEnd.js';
import { STOP, type RequestState, type Step, type StepResult } from '../pipeline/steps.js';
import type { Services } from '../domain/services.js';
import type { Report } from '../verdict/report.js';
import { parseSse } from '../verdict/sse.js';
import type { Exchange } from '../verdict/types.js';
import type { Context } from 'koa';
import {
  CASSETTE_VERSION,
  CassetteStore,
  isText,
  normaliseRequest,
  requestHash,
  type Cassette,
  type RecordedEvent,
} from './cassette.js';
import { requestViolations, responseViolations, violationsHeader, ViolationLog, type Judged } from './validation.js';
import { RelayedStreamFault } from './streamFault.js';

/** The validating proxy's report: the conformance runner's, one failed case per exchange with violations. */
export type ViolationsReport = Report;

/** Counters of a relaying mock. */
export interface RelayStats {
  /** Cassettes written, and writes that failed (each one logged). */
  recorded: number;
  recordFailures: number;
  /** Requests answered from a cassette, and requests that had none. */
  replayed: number;
  misses: number;
  /** Exchanges the proxy judged, and those with at least one violation. */
  exchanges: number;
  withViolations: number;
}

/** What createApp gets: the step in the handler's place, and what the server reads and closes. */
export interface Relay {
  readonly mode: 'proxy' | 'replay';
  /** The answering step: relayed operations go upstream or to a cassette; the others to `validate` then `handle`. */
  step(validate: Step, handle: Step): Step;
  stats(): RelayStats;
  /** The violations seen so far, as the conformance runner's report. */
  violations(): Report | undefined;
  /** Waits for cassette writes in flight, then writes the violations report; resolves to the files written. */
  close(): Promise<string[]>;
}

/** Whether the relay answers an operation: every keyed operation of the API, and the media downloads its links lead to.
 * */
export const relayed = (op: Operation): boolean => op.auth === 'key' || op.path.startsWith('/media/');

// Headers that belong to one connection, or that the relay sets itself; never forwarded, recorded or replayed.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
]);
// Request headers kept from the upstream: the mock's own key, its fault controls, and what fetch sets.
const NOT_FORWARDED = new Set([
  ...HOP_BY_HOP,
  'host',
  'authorization',
  'cookie',
  'content-length',
  'accept-encoding',
  'x-mock-fault',
  'prefer',
  'x-admin-token',
]);
// Response headers not relayed: transport (length, encoding, date) and identity (the mock issues its own x-request-id).
const NOT_RELAYED = new Set([
  ...HOP_BY_HOP,
  'content-length',
  'content-encoding',
  'date',
  'x-request-id',
  'set-cookie',
  'authorization',
]);

const MAX_UPSTREAM_BODY = 256 * 1024 * 1024;

/** Checks the relay settings and builds the relay; undefined when the mock answers by itself. */
export function createRelay(
  config: Config,
  services: Services,
  schemas: SchemaRegistry,
  report: ErrorSink,
  timers?: StreamTimers,
): Relay | undefined {
  if (config.proxy && config.replay)
    throw new ConfigError(
      'proxy and replay exclude each other: record with --proxy URL --record DIR, replay with --replay DIR',
    );
  if (config.record && !config.proxy)
    throw new ConfigError('record needs proxy: cassettes are recorded from a real upstream (--proxy URL --record DIR)');
  if (!config.proxy && !config.replay) return undefined;
  const scrub = secretScrubber(configSecrets(config));
  const scrubPlain = secretScrubber(configSecrets(config), { json: false });
  const stats: RelayStats = { recorded: 0, recordFailures: 0, replayed: 0, misses: 0, exchanges: 0, withViolations: 0 };
  const pending = new Set<Promise<void>>();
  const profile = config.validationProfile;

  if (config.replay) {
    const store = new CassetteStore(config.replay);
    return {
      mode: 'replay',
      step: (validate, handle) => replayStep(store, config, services, stats, validate, handle),
      stats: () => ({ ...stats }),
      violations: () => undefined,
      close: async () => [],
    };
  }

  const base = config.proxy!.replace(/\/+$/, '');
  const store = config.record ? new CassetteStore(config.record) : undefined;
  const log = new ViolationLog(base, profile, scrub, services.limits.proxyReport);

  /** Writes a cassette in the background; a failure is logged and counted, and close() waits for every write. */
  const record = (
    state: RequestState,
    op: Operation,
    ctx: Context,
    response: Cassette['response'] | (() => Promise<Cassette['response']>),
  ) => {
    if (!store) return;
    const request = normaliseRequest(op, ctx.method, ctx.req.url ?? ctx.url, ctx.req.headers, state.body);
    const hash = requestHash(request);
    const write = (async () => {
      const res = typeof response === 'function' ? await response() : response;
      const cassette: Cassette = {
        version: CASSETTE_VERSION,
        hash,
        operation: op.id,
        request,
        upstream: base,
        recordedAt: new Date().toISOString(),
        response: res,
      };
      await store.write(op.id, hash, scrub(JSON.stringify(cassette, null, 2)));
      stats.recorded++;
    })().catch((err: unknown) => {
      stats.recordFailures++;
      report(new Error(`could not write the cassette of ${op.id} ${hash} to ${store.dir}: ${(err as Error).message}`), {
        method: ctx.method,
        url: ctx.path,
        requestId: state.requestId,
      });
    });
    pending.add(write);
    void write.finally(() => pending.delete(write));
  };

  /** The exchange's departures, the upstream's first (the header names the first), with no secret in them. */
  const departures = (j: Judged, found: Violation[]): Violation[] =>
    [...found, ...requestViolations(j)].map((v) => ({
      rule: v.rule,
      expected: scrubPlain(v.expected),
      actual: scrubPlain(v.actual),
    }));
  /** Judges an exchange once it is over: its departures go to the journal and the report. */
  const judge = (state: RequestState, j: Judged, status: number, found: Violation[], ms: number) => {
    const all = departures(j, found);
    if (all.length) state.violations = all;
    log.add(j, status, all, ms);
    return all;
  };

  const forward = async (ctx: Context, state: RequestState, validate: Step, handle: Step): Promise<StepResult> => {
    const op = state.operation!;
    const url = ctx.req.url ?? ctx.url;
    const started = performance.now();
    const refused = op.requestSchema ? validate(ctx, state) : undefined;
    let judged: Judged = {
      requestId: state.requestId,
      op,
      method: ctx.method,
      path: url,
      body: state.body,
      refusal: refused instanceof ApiError ? refused : undefined,
    };
    const left = new AbortController();
    const onClose = () => left.abort();
    const end = endOf(state, ctx.res);
    end.onClose(onClose);
    let res: Response;
    try {
      res = await fetch(base + url, {
        method: ctx.method,
        headers: upstreamHeaders(ctx.req.headers, op.auth === 'key' ? config.upstreamKey : undefined),
        body: ctx.method === 'GET' || ctx.method === 'HEAD' ? undefined : (state.raw ?? ''),
        redirect: 'manual',
        signal: left.signal,
      });
    } catch (err) {
      end.offClose(onClose);
      if (end.closed) {
        ctx.respond = false;
        state.transportStatus = 0;
        state.stream = 'aborted';
        return STOP;
      }
      return new ApiError(templateForStatus(502), {
        code: 'upstream_unreachable',
        message: `The upstream ${base} did not answer: ${scrubPlain((err as Error).message)}`,
      });
    }
    const head = performance.now();
    // A 400 to a body the schema accepts: would the mock refuse it too, by a rule of its own?
    if (!judged.refusal && res.status === 400) judged = { ...judged, unsettled: await mockRefusal(ctx, state, handle) };
    const rawHeaders: Record<string, string> = {};
    res.headers.forEach((value, name) => (rawHeaders[name] = value));
    const kept = relayHeaders(rawHeaders, scrubPlain);
    const type = rawHeaders['content-type'];
    const mockBase = baseUrlOf(ctx, services);

    if (/^text\/event-stream/i.test(type ?? '')) {
      // A stream goes through as it arrives: the head at once, each read as it comes. Its head's
      // departures are in the header; the whole exchange is judged once the stream is over.
      const headFound = await responseViolations(
        judged,
        { status: res.status, headers: rawHeaders, body: Buffer.alloc(0), ms: 0 },
        'documented',
        schemas,
      );
      const early = departures(judged, headFound);
      // A stream fault (stream-cut, stall, malformed) applies to a successful stream as the mock applies
      // it to its own: the events then go out a block at a time, as each completes.
      const fault = res.status >= 200 && res.status < 300 ? RelayedStreamFault.of(state.faultSpec) : undefined;
      const out = ctx.res;
      openHead(out, state);
      ctx.respond = false;
      ctx.status = res.status;
      out.writeHead(res.status, {
        ...(out.getHeaders() as Record<string, string>),
        ...kept,
        ...(early.length ? { 'x-mock-violations': violationsHeader(early) } : {}),
      });
      out.flushHeaders();
      const chunks: Buffer[] = [];
      const reads: number[] = [];
      const events: RecordedEvent[] = [];
      const decoder = new TextDecoder();
      let text = '';
      // False when reading the upstream's stream failed (it broke off, or the client left and the read was aborted).
      let read = false;
      try {
        // A cut or stall after no event at all comes at once, without waiting for the upstream's first.
        if (fault?.over) await res.body?.cancel().catch(() => undefined);
        else
          for await (const chunk of res.body ?? []) {
            const t = Math.round(performance.now() - head);
            const bytes = Buffer.from(chunk as Uint8Array);
            chunks.push(bytes);
            reads.push(bytes.length);
            if (!fault && !out.destroyed) out.write(bytes);
            text += decoder.decode(bytes, { stream: true }).replace(/\r\n?/g, '\n');
            for (let cut = text.indexOf('\n\n'); cut >= 0; cut = text.indexOf('\n\n')) {
              const block = text.slice(0, cut + 2);
              for (const e of parseSse(block).events) events.push({ t, data: e.data });
              text = text.slice(cut + 2);
              const sent = fault?.take(block);
              if (sent && !out.destroyed) out.write(sent);
            }
            // The client gets nothing more: the upstream's answer is not read further.
            if (fault?.over) break;
          }
        read = true;
        if (fault?.ending)
          state.stream = await endEarly(out, end, fault.end(), fault.ending, config.timeouts.stallMaxMs, timers);
        else {
          state.stream = 'completed';
          out.end(fault?.end() ?? '');
        }
      } catch {
        state.stream = out.destroyed ? 'aborted' : 'cut';
        out.destroy();
      }
      end.offClose(onClose);
      const endMs = Math.round(performance.now() - head);
      // As the runner counts it: from the request, so a stream held back whole shows its wait.
      const ms = Math.round(performance.now() - started);
      const body = Buffer.concat(chunks);
      // A stream that a fault ended, or that the client left, is judged by its head: the rest of the
      // upstream's answer was never read, and is not the upstream's departure.
      const faultEnded = fault?.over === true && events.at(-1)?.data !== '[DONE]';
      const partial = faultEnded || state.stream === 'aborted';
      const found = partial
        ? headFound
        : await responseViolations(
            judged,
            { status: res.status, headers: rawHeaders, body, reads, ms },
            profile,
            schemas,
          );
      judge(state, judged, res.status, found, performance.now() - started);
      // The cassette holds the upstream's whole answer as it came, whatever a fault made of it for the client.
      if (read && !partial) record(state, op, ctx, { status: res.status, headers: kept, events, endMs });
      return STOP;
    }

    let body: Buffer;
    try {
      body = await readCapped(res, MAX_UPSTREAM_BODY);
    } catch (err) {
      end.offClose(onClose);
      return new ApiError(templateForStatus(502), {
        code: 'upstream_failed',
        message: `The upstream's answer could not be read: ${scrubPlain((err as Error).message)}`,
      });
    }
    end.offClose(onClose);
    const exchange: Exchange = {
      status: res.status,
      headers: rawHeaders,
      body,
      ms: Math.round(performance.now() - started),
    };
    const violations = judge(
      state,
      judged,
      res.status,
      await responseViolations(judged, exchange, profile, schemas),
      performance.now() - started,
    );
    if (!(res.status >= 500 || res.status === 429))
      record(state, op, ctx, async () => ({
        status: res.status,
        headers: kept,
        body: await store!.storeBody(body, type),
      }));
    const headers: Record<string, string> = { ...kept };
    delete headers['content-type'];
    if (violations.length) headers['x-mock-violations'] = violationsHeader(violations);
    const sent = isText(type) ? rewriteLinks(body, base, mockBase) : body;
    state.reply = { kind: 'binary', status: res.status, contentType: type ?? '', body: sent, headers };
    return undefined;
  };

  return {
    mode: 'proxy',
    step: (validate, handle) =>
      function relay(ctx, state) {
        if (!relayed(state.operation!)) return both(validate, handle, ctx, state);
        return forward(ctx, state, validate, handle);
      },
    stats: () => ({ ...stats, exchanges: log.counts.exchanges, withViolations: log.counts.withViolations }),
    violations: () => log.report(),
    async close() {
      while (pending.size) await Promise.all([...pending]);
      return config.violationsReport ? log.write(config.violationsReport) : [];
    },
  };
}

/**
 * Ends a relayed stream as its fault says, after `rest` (the event it still held): cut once the bytes have
 * left, or held silent until the client leaves or `stallMaxMs` passes, then cut. At shutdown (the server's
 * stream timers run out) a stall ends at once and cleanly, as the mock's own does. Resolves with how it ended.
 */
function endEarly(
  out: ServerResponse,
  end: RequestEnd,
  rest: string,
  ending: 'cut' | 'stall',
  stallMaxMs: number,
  timers: StreamTimers = realTimers,
): Promise<'cut' | 'stalled' | 'aborted'> {
  if (end.closed) return Promise.resolve('aborted');
  return new Promise((resolve) => {
    if (ending === 'cut') {
      // Destroying in the same tick as the writes would drop them: cut once they have left. A response pipelined
      // behind another writes nothing until its turn: its client leaving first ends it.
      const gone = () => resolve('aborted');
      end.onClose(gone);
      out.write(rest, () => {
        end.offClose(gone);
        out.destroy();
        resolve('cut');
      });
      return;
    }
    if (rest) out.write(rest);
    const done = () => {
      timers.clearTimeout(timer);
      end.offClose(done);
      resolve('stalled');
    };
    // Ended here, not by the 'close' it brings: a response still queued behind another is told nothing.
    const timer = timers.setTimeout(() => {
      if (timers.stopping?.aborted) out.end();
      else out.destroy();
      done();
    }, stallMaxMs);
    end.onClose(done);
  });
}

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

/** Runs validate, then handle, as the steps would without a relay. */
function both(validate: Step, handle: Step, ctx: Context, state: RequestState): StepResult | Promise<StepResult> {
  const refused = validate(ctx, state);
  if (refused instanceof Promise) return refused.then((r) => r ?? handle(ctx, state));
  return refused ?? handle(ctx, state);
}

/** The headers sent upstream: the client's, less its key, the mock's fault controls and connection headers; the
 * upstream key instead. */
function upstreamHeaders(incoming: IncomingHttpHeaders, key: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || NOT_FORWARDED.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  out['accept-encoding'] = 'identity';
  if (key) out.authorization = `Bearer ${key}`;
  return out;
}

/** The upstream's response headers as relayed and recorded: no connection or identity headers, no secret in any value.
 * */
function relayHeaders(
  headers: Readonly<Record<string, string>>,
  scrub: (text: string) => string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!NOT_RELAYED.has(name)) out[name] = scrub(value);
  return out;
}

/** A text body with links to the upstream turned into links to this mock, which relays (or replays) them. */
function rewriteLinks(body: Buffer, upstream: string, mock: string): Buffer {
  const text = body.toString('utf8');
  return text.includes(`${upstream}/`) ? Buffer.from(text.split(`${upstream}/`).join(`${mock}/`), 'utf8') : body;
}

async function readCapped(res: Response, cap: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).length;
    if (size > cap) throw new Error(`the body passed ${cap} bytes`);
    chunks.push(Buffer.from(chunk as Uint8Array));
  }
  return Buffer.concat(chunks);
}

/** The replay step: a cassette's answer, else the fallback (a 404 naming the hash, or the mock's own answer). */
function replayStep(
  store: CassetteStore,
  config: Config,
  services: Services,
  stats: RelayStats,
  validate: Step,
  handle: Step,
): Step {
  return async function replay(ctx, state) {
    const op = state.operation!;
    if (!relayed(op)) return both(validate, handle, ctx, state);
    const hash = requestHash(normaliseRequest(op, ctx.method, ctx.req.url ?? ctx.url, ctx.req.headers, state.body));
    const cassette = await store.read(op.id, hash);
    if (!cassette) {
      stats.misses++;
      if (config.replayFallback === 'mock') return both(validate, handle, ctx, state);
      // A media link is in a recorded answer, but its bytes are only recorded when a client fetched them through the
      // proxy: most tests never download the image or video they are given.
      const message = op.id.startsWith('media.')
        ? `No cassette for this media file (hash ${hash}) in ${store.dir}: the answer that links to it was recorded, but no client downloaded the file through the proxy while recording, and only what a client fetched is recorded. Download the link during the recording, or let the mock make the file with '--replay-fallback mock'.`
        : `No cassette for this ${op.id} request (hash ${hash}) in ${store.dir}. Record it against a real upstream with 'npx unified-ai-mock serve --proxy URL --record ${store.dir}', or let the mock answer with '--replay-fallback mock'.`;
      return new ApiError(ERRORS.NOT_FOUND, {
        code: 'cassette_not_found',
        message,
        headers: { 'x-mock-cassette': hash },
      });
    }
    stats.replayed++;
    const r = cassette.response;
    const headers: Record<string, string> = { ...r.headers };
    delete headers['content-type'];
    if (r.events) {
      const done = r.events.at(-1)?.data === '[DONE]';
      const events = new EventList((done ? r.events.slice(0, -1) : r.events).map((e) => ({ data: e.data, tokens: 1 })));
      const t0 = r.events[0]?.t ?? 0;
      const schedule = [
        ...r.events.map((e) => e.t - t0),
        ...(done ? [] : [(r.endMs ?? r.events.at(-1)?.t ?? t0) - t0]),
      ];
      state.reply = {
        kind: 'sse',
        events,
        ending: done ? 'done' : 'cut',
        stopAfter: events.length,
        pacing: { timeToFirstTokenMs: t0, tokensPerSecond: config.replayTps ?? 0 },
        ...(config.replayTps ? {} : { schedule }),
        headers,
      };
      return;
    }
    const type = r.headers['content-type'];
    const bytes = r.body ? await store.bodyBytes(r.body) : Buffer.alloc(0);
    state.reply = {
      kind: 'binary',
      status: r.status,
      contentType: type ?? '',
      body: isText(type) ? rewriteLinks(bytes, cassette.upstream, baseUrlOf(ctx, services)) : bytes,
      headers,
    };
  };
}
