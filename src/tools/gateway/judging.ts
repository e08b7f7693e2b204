// What every judge of the gateway profile shares: the run's settings they read, the shape of a finding, and how an
// answer is told in a failure.
import { schemaId, type SchemaRegistry } from '../../contract/schemas.js';
import type { EntryJson } from '../../domain/journal/journal.js';
import type { CheckFailure, Exchange } from '../../verdict/types.js';
import type { GatewayCase } from './cases.js';
import type { Observation, Sent } from './probe.js';

/** What the judges know of the run besides the observations. */
export interface JudgeContext {
  readonly registry: SchemaRegistry;
  /** The key the client sends to the gateway (--api-key). */
  readonly clientKey: string;
  /** Keys the gateway is configured to send upstream (--upstream-key; else the mock's default keys). */
  readonly upstreamKeys: readonly string[];
  /** The gateway is documented to pass the client's key through (--key-passthrough). */
  readonly keyPassthrough: boolean;
  /** The model names the gateway is documented to rewrite (--model-alias CLIENT=UPSTREAM). */
  readonly modelAliases: Readonly<Record<string, string>>;
  /** Fields the gateway is documented to rewrite: not compared (--rewrites). */
  readonly rewrites: readonly string[];
  /** How much later than the upstream wrote an event the client may read it (--first-event-bound). */
  readonly firstEventBoundMs: number;
  /** The gateway's own timeout for a hung upstream (--gateway-timeout). */
  readonly gatewayTimeoutMs: number;
  /** The bytes the upstream answered a request with, while it holds them (a binary answer's comparison). */
  readonly upstreamBody: (entry: EntryJson) => Promise<Buffer | undefined>;
}

/** A judge's finding: failures, or a verdict that is neither (with why), and for a pass what was measured. */
export interface Judgement {
  readonly failures: readonly CheckFailure[];
  readonly reason?: string;
  readonly verdict?: 'inconclusive' | 'not-applicable';
}

export type Judge = (gc: GatewayCase, obs: readonly Observation[], ctx: JudgeContext) => Judgement | Promise<Judgement>;

export const inconclusive = (reason: string): Judgement => ({ failures: [], verdict: 'inconclusive', reason });
export const passed = (reason?: string): Judgement => ({ failures: [], ...(reason ? { reason } : {}) });
export const failed = (failures: CheckFailure[], reason?: string): Judgement => ({
  failures,
  ...(reason ? { reason } : {}),
});

const EXCERPT_CHARS = 160;

/** The start of an answer's body, for a failure's text; a binary body by its size and type. */
export function excerpt(ex: Exchange): string {
  const type = ex.headers['content-type'] ?? '';
  if (ex.body.length && !/json|text/.test(type)) return `(${ex.body.length} bytes of ${type || 'unknown type'})`;
  const text = ex.body
    .subarray(0, EXCERPT_CHARS * 4)
    .toString('utf8')
    .replace(/\s+/g, ' ');
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}...` : text;
}

/** What the client got, in a few words: the status and the body's start, or the transport error. */
export function answered(x: Pick<Sent, 'ex' | 'waitedOut' | 'waitMs'>): string {
  if (x.waitedOut && x.ex.status === 0) return `no answer within ${x.waitMs} ms`;
  if (x.ex.error && x.ex.status === 0) return `no answer (${x.ex.error})`;
  const body = excerpt(x.ex);
  return `status ${x.ex.status}${body ? `: ${body}` : ''}${x.ex.error ? ` (then ${x.ex.error})` : ''}`;
}

export const mime = (type: string | undefined): string => (type ?? '').split(';')[0]!.trim().toLowerCase();

/** A header of a journal entry's response, whatever the case of its name. */
export function upstreamHeader(e: EntryJson, name: string): string | undefined {
  const headers = e.responseHeaders ?? {};
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/** When a journal entry's request arrived, on the epoch clock. */
export const arrival = (e: EntryJson): number => e.time - e.latencyMs;

export const show = (v: unknown): string => (v === undefined ? 'nothing' : JSON.stringify(v));

export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  return (
    ka.length === Object.keys(b).length &&
    ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

export function json(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

export const first = (obs: readonly Observation[]): Sent | undefined => obs[0]?.sent[0];

/** Why a probe's cases cannot be judged: the upstream could not be set up, or nothing was sent. */
export function unjudged(obs: readonly Observation[]): string | undefined {
  const problem = obs.find((o) => o.problem)?.problem;
  if (problem) return problem;
  return obs.some((o) => !o.sent.length) ? 'nothing was sent' : undefined;
}

/**
 * Whether an answer is an error a client can read: JSON whose `error` is an object with a message, the one member of
 * the envelope every SDK reads (a gateway's own errors need not have the mock's type, param and code).
 */
export function isErrorObject(ex: Exchange): boolean {
  if (!/json/.test(mime(ex.headers['content-type']))) return false;
  const error = (json(ex.body.toString('utf8')) as { error?: { message?: unknown } } | undefined)?.error;
  return typeof error === 'object' && error !== null && typeof error.message === 'string' && error.message !== '';
}

/** Whether an answer is the error envelope as application/json. */
export function isEnvelope(ex: Exchange, registry: SchemaRegistry): boolean {
  if (mime(ex.headers['content-type']) !== 'application/json') return false;
  const body = json(ex.body.toString('utf8'));
  return body !== undefined && registry.check(schemaId('error.json'), body).length === 0;
}
