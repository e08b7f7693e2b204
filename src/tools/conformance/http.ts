import { addressesOf, addressRefusal, type Lookup } from './addresses.js';
import { nearMissCredential, type Credential } from './credentials.js';
import { cleanText, RARE_SECRET, wellFormed } from './mask.js';
import { maskKey } from '../../domain/keys.js';
import type { Media, MediaRequest } from '../../verdict/mediaChecks.js';
import type { AuthMode, Case, Exchange, Incomplete } from '../../verdict/types.js';

/** Where and how to send: the target and the run's key. */
export interface Target {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly pathPrefix: string;
  readonly timeoutMs: number;
  readonly unknownKey: string;
  /** The most of one body the runner reads (DEFAULT_MAX_BODY_BYTES when absent). */
  readonly maxBodyBytes?: number;
  /**
   * Media links on loopback and private addresses are fetched: the target is on one itself, or --media-allow-private.
   */
  readonly mediaAllowPrivate?: boolean;
  /** The path each documented path is served at instead (--route), by the document's path. */
  readonly routes?: Readonly<Record<string, string>>;
  /** Headers added to every request to the target (--header), by lower-case name. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The --header values that look like secrets: masked in every report as the key is. */
  readonly headerSecrets?: readonly string[];
}

/** A request as the runner sends it: a case's request, and whether to read its body read by read (to see whether an
 * event stream arrives incrementally). */
export type OutgoingRequest = Case['request'] & { readonly streamed?: boolean };

/** The full URL of a path: the base URL, the prefix (unless the path already has it), the path (or its --route), and
 * the query. */
function urlOf(target: Target, path: string, query: Readonly<Record<string, string>> = {}): string {
  const served = target.routes?.[path] ?? path;
  const prefix = target.pathPrefix.replace(/\/+$/, '');
  const withPrefix = prefix && !served.startsWith(`${prefix}/`) ? prefix + served : served;
  // encodeURIComponent, as derivedSecrets encodes the key, so the key in a query is masked in reports.
  const search = Object.entries(query)
    .map(([k, v]) => `${encodeURIComponent(wellFormed(k))}=${encodeURIComponent(wellFormed(v))}`)
    .join('&');
  return target.baseUrl.replace(/\/+$/, '') + withPrefix + (search ? `?${search}` : '');
}

/**
 * How an auth mode carries its credential, or undefined when a near miss cannot be made from this key (no letters to
 * change the case of). `shown`: as reports show it, the mask of the key (or of the unknown key) where it goes.
 */
function credentialOf(target: Target, mode: AuthMode, shown = false): Credential | undefined {
  const key = shown ? maskKey(target.apiKey) : target.apiKey;
  switch (mode) {
    case 'valid':
      return { authorization: `Bearer ${key}` };
    case 'lowercase':
      return { authorization: `bearer ${key}` };
    case 'basic':
      return { authorization: `Basic ${key}` };
    case 'empty':
      return { authorization: 'Bearer ' };
    case 'unknown':
      return { authorization: `Bearer ${shown ? maskKey(target.unknownKey) : target.unknownKey}` };
    case 'missing':
      return {};
    default:
      return nearMissCredential(mode.slice('near-miss:'.length), target.apiKey, shown ? key : undefined);
  }
}

/** The headers a request carries on the wire: the credential, the content type, the run's --header, the case's own. */
export function headersOf(
  target: Target,
  req: OutgoingRequest,
  credential: Credential = credentialOf(target, req.auth) ?? {},
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (credential.authorization !== undefined) headers.authorization = credential.authorization;
  for (const [k, v] of Object.entries(credential.headers ?? {})) headers[k] = v;
  if (req.body !== undefined || req.raw !== undefined) headers['content-type'] = 'application/json';
  for (const [k, v] of Object.entries(target.headers ?? {})) headers[k.toLowerCase()] = v;
  for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = v;
  return headers;
}

/** Where a request goes: its URL, the --route and the credential's query applied. */
const requestUrl = (
  target: Target,
  req: OutgoingRequest,
  credential: Credential = credentialOf(target, req.auth) ?? {},
): string => urlOf(target, req.path, credential.query);

/** A request as reports show it: its method, URL and headers. */
interface ShownRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
}

/**
 * A request as reports show it: built as it is sent, with each secret the run puts in a request replaced by its mask
 * where it goes: the credential (the Authorization header, a near miss's other header, query parameter or cookie) and
 * the secret-looking --header values. Nothing is searched for in text, so a key that is a common word (`test`) is
 * masked where it was sent and nowhere else. Undefined when the near miss cannot be made from this key.
 */
export function shownRequest(target: Target, req: OutgoingRequest): ShownRequest | undefined {
  const credential = credentialOf(target, req.auth, true);
  if (!credential) return undefined;
  const secrets = new Set(target.headerSecrets);
  const headers = Object.fromEntries(
    Object.entries(target.headers ?? {}).map(([name, value]) => [name, secrets.has(value) ? maskKey(value) : value]),
  );
  const shown = { ...target, headers };
  return { method: req.method, url: requestUrl(shown, req, credential), headers: headersOf(shown, req, credential) };
}

/**
 * The most of one body the runner keeps: 16 MiB. The answers this suite asks for are far smaller
 * (a chat completion is kilobytes; the largest, a b64_json 1024x1024 PNG or 2500 characters of MP3,
 * a few MiB; the mock's largest is under 2 MiB), and a media file past it is still judged on its
 * start, where a PNG's size and a fast-start MP4's movie header are. --max-body raises it for longer
 * media. A larger default would buy nothing but time: against an endless body, every request reads
 * up to the cap before it gives up.
 */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Bodies up to this size are read side by side; past it, one at a time (see takeTurn). So memory is
 * bounded by concurrency x 1 MiB + one cap, not concurrency x cap: error bodies and chat answers
 * stay concurrent, and only the rare large body (b64 images, audio, media) waits its turn.
 */
const LARGE_BODY_BYTES = 1024 * 1024;

/** Redirects a media link may take before the runner gives up on it. */
const MAX_MEDIA_REDIRECTS = 5;

/** Past this many reads of one event stream, the older reads are merged (the stream check needs only the count and the
 * last one). */
const MAX_READS_KEPT = 4096;

const mib = (bytes: number) => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

let largeBusy = false;
const largeQueue: (() => void)[] = [];

/** Waits until no other body past LARGE_BODY_BYTES is being read; endTurn lets the next one go. */
function takeTurn(): Promise<void> {
  if (!largeBusy) {
    largeBusy = true;
    return Promise.resolve();
  }
  return new Promise((resolve) => largeQueue.push(resolve));
}

function endTurn(): void {
  const next = largeQueue.shift();
  if (next) next();
  else largeBusy = false;
}

/**
 * A request's timeout: one budget for the headers, the body and (for media) every redirect. It
 * stops while a read waits its turn, so that waiting behind another case's large body does not eat
 * this one's time; the wait itself is bounded by the other body's own deadline.
 */
class Deadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private left: number;
  private since = 0;
  readonly signal = this.controller.signal;
  constructor(readonly ms: number) {
    this.left = ms;
    this.resume();
  }
  pause(): void {
    clearTimeout(this.timer);
    this.left -= performance.now() - this.since;
  }
  resume(): void {
    this.since = performance.now();
    // unref: a finished run never waits for the timer of a request that already ended.
    this.timer = setTimeout(
      () => this.controller.abort(new DOMException(`timed out after ${this.ms} ms`, 'TimeoutError')),
      Math.max(0, this.left),
    ).unref();
  }
  clear(): void {
    clearTimeout(this.timer);
  }
}

/** A transport failure in words: what happened, from undici's code or the error's own message. */
function describe(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within the ${timeoutMs} ms timeout`;
  const code = e.cause?.code;
  const message = e.cause?.message ?? e.message;
  // Parser errors quote what the target sent; the text is cleaned before it reaches any report.
  return cleanText(code && message && !message.includes(code) ? `${code} (${message})` : (code ?? message), [], 200);
}

// The buffer of the one body being read past LARGE_BODY_BYTES (see takeTurn), kept for the next
// such body: an endless body then leaves no cap-sized garbage behind. Measured: the collector frees
// dead buffers only after some 64 MiB of them, and four dead 16 MiB sinks were most of the peak RSS.
let spare: Buffer | undefined;

/**
 * Bytes appended into one buffer: no object per read is kept, and nothing past the cap. A body up to
 * LARGE_BODY_BYTES lives in a buffer of its own; past that (with the turn held), in the spare
 * cap-sized buffer, from which only what is kept is copied out at the end: all of a complete body,
 * the first LARGE_BODY_BYTES of one cut short (enough for an excerpt, a PNG header or an MP4's
 * leading boxes).
 */
class Sink {
  private buf: Buffer;
  private large = false;
  length = 0;
  constructor(
    private readonly max: number,
    announced: number,
  ) {
    this.buf = Buffer.allocUnsafe(Math.max(1, Math.min(max, LARGE_BODY_BYTES, announced || 64 * 1024)));
  }
  /** Whether adding `more` bytes moves the body past LARGE_BODY_BYTES (the caller takes the turn first). */
  becomesLarge(more: number): boolean {
    return !this.large && Math.min(this.max, this.length + more) > LARGE_BODY_BYTES;
  }
  /** Keeps what fits under the cap; false when the chunk went past it. */
  add(chunk: Uint8Array): boolean {
    const take = Math.min(chunk.length, this.max - this.length);
    const need = this.length + take;
    if (need > this.buf.length) {
      let next: Buffer;
      if (need > LARGE_BODY_BYTES) {
        next = spare?.length === this.max ? spare : Buffer.allocUnsafe(this.max);
        spare = undefined;
        this.large = true;
      } else next = Buffer.allocUnsafe(Math.min(LARGE_BODY_BYTES, Math.max(need, this.buf.length * 2)));
      this.buf.copy(next, 0, 0, this.length);
      this.buf = next;
    }
    this.buf.set(chunk.subarray(0, take), this.length);
    this.length += take;
    return take === chunk.length;
  }
  /** The body as kept; the large buffer goes back to the spare slot. Call once, with the turn still held. */
  finish(complete: boolean): Buffer {
    if (!this.large) return this.buf.subarray(0, this.length);
    const kept = Buffer.from(this.buf.subarray(0, complete ? this.length : Math.min(this.length, LARGE_BODY_BYTES)));
    spare = this.buf;
    this.large = false;
    return kept;
  }
}

interface BodyRead {
  readonly body: Buffer;
  readonly reads?: number[];
  readonly readMs?: number[];
  readonly incomplete?: Incomplete;
  /** A transport failure after the headers (a reset): the body is not the target's answer. */
  readonly error?: string;
}

/**
 * Reads a body up to `maxBytes`, then cancels the read. The deadline's signal, given to the fetch,
 * also ends a body that trickles or never ends (the read then rejects). Never throws.
 */
async function readBody(
  res: Response,
  maxBytes: number,
  deadline: Deadline,
  countReads: boolean,
  started = performance.now(),
): Promise<BodyRead> {
  const timeoutMs = deadline.ms;
  const sink = new Sink(maxBytes, Number(res.headers.get('content-length')) || 0);
  const reads: number[] | undefined = countReads ? [] : undefined;
  const readMs: number[] = [];
  const counted = () => (reads ? { reads, readMs } : {});
  if (!res.body) return { body: sink.finish(true), ...counted() };
  const reader = res.body.getReader();
  let turn = false;
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      if (!turn && sink.becomesLarge(r.value.length)) {
        deadline.pause();
        await takeTurn();
        turn = true;
        deadline.resume();
      }
      if (reads) {
        // A merged read keeps the time of its last part.
        if (reads.length === MAX_READS_KEPT) {
          reads[reads.length - 2]! += reads.pop()!;
          readMs[readMs.length - 2] = readMs.pop()!;
        }
        reads.push(r.value.length);
        readMs.push(Math.round((performance.now() - started) * 10) / 10);
      }
      if (!sink.add(r.value)) {
        await reader.cancel().catch(() => {}); // closes the connection: nothing more is downloaded
        return {
          body: sink.finish(false),
          ...counted(),
          incomplete: { cause: 'cap', detail: `exceeded the ${mib(maxBytes)} cap (--max-body) and was cut there` },
        };
      }
    }
    return { body: sink.finish(true), ...counted() };
  } catch (err) {
    const e = err as Error;
    if (e.name === 'TimeoutError' || e.name === 'AbortError') {
      return {
        body: sink.finish(false),
        ...counted(),
        incomplete: {
          cause: 'timeout',
          detail: `did not end within the ${timeoutMs} ms timeout (${sink.length} bytes read)`,
        },
      };
    }
    return {
      body: sink.finish(false),
      ...counted(),
      error: `${describe(err, timeoutMs)} after the response headers (status ${res.status}, ${sink.length} bytes of the body read)`,
    };
  } finally {
    if (turn) endTurn();
  }
}

/**
 * Sends one request and reads the answer, at most `maxBodyBytes` of it, within `timeoutMs` from the
 * start (headers and body together). A transport failure is returned, never thrown. Redirects are
 * not followed: a 3xx is judged as the status it is, and the key never leaves for another host.
 */
export async function send(target: Target, req: OutgoingRequest): Promise<Exchange> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const deadline = new Deadline(target.timeoutMs);
  try {
    let res: Response;
    try {
      res = await fetch(requestUrl(target, req), {
        method: req.method,
        headers: headersOf(target, req),
        body: req.raw ?? (req.body === undefined ? undefined : JSON.stringify(req.body)),
        signal: deadline.signal,
        redirect: 'manual',
      });
    } catch (err) {
      return {
        status: 0,
        headers: {},
        body: Buffer.alloc(0),
        error: `${describe(err, target.timeoutMs)} before the response headers`,
        ms: ms(),
      };
    }
    const headers = Object.fromEntries(res.headers);
    const read = await readBody(
      res,
      target.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      deadline,
      req.streamed === true,
      started,
    );
    return { status: res.status, headers, ...read, ms: ms() };
  } finally {
    deadline.clear();
  }
}

/** How media links are fetched: the checks' settings, and how host names are resolved. */
interface MediaFetch extends MediaRequest {
  /** How host names are resolved before each hop (the system resolver unless a test passes its own). */
  readonly lookup?: Lookup;
}

// A shorter key is a word any link may hold (`test`, `img`): its presence says nothing of a leak.
const carries = (url: string, secrets: readonly string[]) => {
  let decoded = url;
  try {
    decoded = decodeURIComponent(url);
  } catch {
    // not percent-encoded text: the link as it is
  }
  return secrets.some((s) => s.length >= RARE_SECRET && (url.includes(s) || decoded.includes(s)));
};

/**
 * Fetches a media link from a response. Links are meant to be fetched as they are, so no request
 * here carries the key or any other credential, on the target's origin or another: fetch adds none,
 * and the redirects (at most 5, http and https only) are followed by hand so that every hop is one
 * this function sends. A link (or a redirect) that contains the key is not fetched, nor one whose
 * host is or resolves to an address the runner does not reach into (the cloud metadata service at
 * 169.254.169.254, the runner's own loopback, its private network: see addresses.ts); each hop's
 * host is resolved and checked before anything is sent to it. The timeout covers every hop, the
 * name lookups and the body; the body is read up to the cap like any other.
 */
export async function fetchMedia(url: string, how: MediaFetch): Promise<Media> {
  const deadline = new Deadline(how.timeoutMs);
  try {
    return await fetchLink(url, how, deadline);
  } finally {
    deadline.clear();
  }
}

/** A promise's outcome, or the signal's reason if it aborts first (a name lookup takes no signal). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** fetchMedia's hops, each checked before it is sent, within the one deadline. */
async function fetchLink(url: string, how: MediaFetch, deadline: Deadline): Promise<Media> {
  let next = url;
  let redirect: number | undefined; // the status of the redirect that led to this hop
  for (let hop = 0; ; hop++) {
    let at: URL;
    try {
      at = new URL(next);
    } catch {
      return { error: 'not a URL' };
    }
    if (at.protocol !== 'http:' && at.protocol !== 'https:')
      return { error: `not an http or https link (${at.protocol})` };
    if (carries(next, how.secrets ?? []))
      return { error: 'the link carries the API key, so the runner does not fetch it' };
    let addresses: readonly string[];
    try {
      addresses = await untilAborted(addressesOf(at.hostname, how.lookup), deadline.signal);
    } catch (err) {
      return { error: describe(err, how.timeoutMs) };
    }
    const refusal = addressRefusal(at.hostname, addresses, how.allowPrivate ?? false);
    if (refusal)
      return {
        error: `${redirect === undefined ? 'the link points to' : `the link redirects (${redirect}) to`} ${refusal}`,
        refused: true,
      };
    let res: Response;
    try {
      res = await fetch(at, { signal: deadline.signal, redirect: 'manual' });
    } catch (err) {
      return { error: describe(err, how.timeoutMs) };
    }
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location !== null) {
      await res.body?.cancel().catch(() => {});
      if (hop === MAX_MEDIA_REDIRECTS) return { error: `more than ${MAX_MEDIA_REDIRECTS} redirects` };
      try {
        next = new URL(location, at).href;
      } catch {
        return { error: `a redirect (${res.status}) to something that is not a URL` };
      }
      redirect = res.status;
      continue;
    }
    const read = await readBody(res, how.maxBytes ?? DEFAULT_MAX_BODY_BYTES, deadline, false);
    if (read.error) return { error: read.error };
    return {
      status: res.status,
      contentType: res.headers.get('content-type') ?? '',
      body: read.body,
      ...(read.incomplete ? { incomplete: read.incomplete } : {}),
    };
  }
}
