import type { AuthMode, Exchange } from './types.js';

/** Where and how to send: the target and the run's key. */
export interface Target {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly pathPrefix: string;
  readonly timeoutMs: number;
  readonly unknownKey: string;
}

/** A request as the runner sends it. */
export interface OutgoingRequest {
  readonly method: string;
  readonly path: string;
  readonly auth: AuthMode;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly raw?: string;
  /** Read the body read by read, to see whether an event stream arrives incrementally. */
  readonly streamed?: boolean;
}

/** The full URL of a path: the base URL, the prefix (unless the path already has it), the path. */
export function urlOf(target: Target, path: string): string {
  const prefix = target.pathPrefix.replace(/\/+$/, '');
  const withPrefix = prefix && !path.startsWith(`${prefix}/`) ? prefix + path : path;
  return target.baseUrl.replace(/\/+$/, '') + withPrefix;
}

/** The Authorization header for an auth mode, or undefined for none. */
export function authorization(target: Target, mode: AuthMode): string | undefined {
  switch (mode) {
    case 'valid':
      return `Bearer ${target.apiKey}`;
    case 'basic':
      return `Basic ${target.apiKey}`;
    case 'empty':
      return 'Bearer ';
    case 'unknown':
      return `Bearer ${target.unknownKey}`;
    case 'missing':
      return undefined;
  }
}

/** The headers a request carries on the wire. */
export function headersOf(target: Target, req: OutgoingRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  const auth = authorization(target, req.auth);
  if (auth !== undefined) headers.authorization = auth;
  if (req.body !== undefined || req.raw !== undefined) headers['content-type'] = 'application/json';
  for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = v;
  return headers;
}

const describe = (err: unknown): string => {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timed out';
  return e.cause?.code ?? e.cause?.message ?? e.message;
};

/** Sends one request and reads the whole answer; a transport failure or timeout is returned, never thrown. */
export async function send(target: Target, req: OutgoingRequest): Promise<Exchange> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    const res = await fetch(urlOf(target, req.path), {
      method: req.method,
      headers: headersOf(target, req),
      body: req.raw ?? (req.body === undefined ? undefined : JSON.stringify(req.body)),
      signal: AbortSignal.timeout(target.timeoutMs),
      redirect: 'manual',
    });
    const headers = Object.fromEntries(res.headers);
    if (!req.streamed || !res.body) return { status: res.status, headers, body: Buffer.from(await res.arrayBuffer()), ms: ms() };
    const parts: Buffer[] = [];
    const reader = res.body.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(Buffer.from(r.value));
    return { status: res.status, headers, body: Buffer.concat(parts), reads: parts.map((p) => p.length), ms: ms() };
  } catch (err) {
    return { status: 0, headers: {}, body: Buffer.alloc(0), error: describe(err), ms: ms() };
  }
}

/** Fetches a media link from a response (no key: links are meant to be fetched as they are). */
export async function fetchMedia(url: string, timeoutMs: number): Promise<{ status: number; contentType: string; body: Buffer } | { error: string }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: Buffer.from(await res.arrayBuffer()) };
  } catch (err) {
    return { error: describe(err) };
  }
}
