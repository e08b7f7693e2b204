import { isRecipe } from '../contract/reply.js';
import { Lru } from '../lib/lru.js';
import { journalled, type RequestRecord } from './journal/journal.js';
import type { Limits } from './limits.js';
import { secretScrubber } from './secrets.js';

/** A response body held for the inspector: its Content-Type and the bytes (or JSON text) the reply had. */
interface HeldBody {
  readonly contentType: string;
  readonly body: Buffer | string;
}

// Text types are masked when read: a relayed answer or a reply that echoes the prompt may quote a key.
const TEXT_TYPE = /^(text\/|application\/(?:json|[\w.+-]*\+json|xml|x-ndjson))/i;
const HEAD_TYPE = /\r\ncontent-type:[ \t]*([^\r]*)/i;

/** The Content-Type a record's response was sent with, from the header block Node wrote or the headers set. */
function contentTypeOf(r: RequestRecord): string | undefined {
  const head = (r as { responseHead?: unknown }).responseHead;
  if (typeof head === 'string') return HEAD_TYPE.exec(head)?.[1];
  const headers = r.responseHeaders;
  if (!headers) return undefined;
  for (const name in headers) if (name.toLowerCase() === 'content-type') return String(headers[name]);
  return undefined;
}

/**
 * The bodies of recent answers the journal does not keep whole: binary ones (speech, images and videos
 * downloaded) and text longer than the journal's cut, keyed by request id, served to the inspector by
 * GET /__admin/requests/:id/body. Bounded by total size (records.maxHeldResponseBytes by default) and by
 * count (`maxEntries`, the journal's size), the oldest going first; a body is held as the reply had it (the
 * Buffer itself, never a copy). Admin calls and probes are left out.
 */
export class ResponseBodies {
  private readonly held: Lru<HeldBody>;
  private readonly scrub: (text: string) => string;
  // The journal keeps a text body's first records.maxResponseBodyChars itself; only longer ones (an image
  // answer's b64_json) are held here.
  private readonly journalTextChars: number;

  /** `records`: the records bounds of fixtures/limits.json (`maxBytes`, the store's size, is
   * records.maxHeldResponseBytes unless given). */
  constructor(
    records: Pick<Limits['records'], 'maxResponseBodyChars' | 'maxHeldResponseBytes'>,
    maxEntries: number,
    secrets: readonly string[] = [],
    maxBytes = records.maxHeldResponseBytes,
  ) {
    this.journalTextChars = records.maxResponseBodyChars;
    this.held = new Lru<HeldBody>(Math.max(0, maxEntries), maxBytes);
    this.scrub = secretScrubber(secrets, { json: false });
  }

  /** Holds the record's body when the journal cannot show it whole; a plain JSON answer costs one comparison. */
  keep(r: RequestRecord): void {
    const body = r.responseBody;
    // A recipe is recorded only for a text the journal keeps whole (pipeline/respond.ts).
    if (body === undefined || isRecipe(body) || (typeof body === 'string' && body.length <= this.journalTextChars))
      return;
    if (!journalled(r)) return;
    const contentType =
      contentTypeOf(r) ?? (typeof body === 'string' ? 'application/json; charset=utf-8' : 'application/octet-stream');
    // A record's bytes are a Buffer (a view on the same memory otherwise, never a copy).
    const held =
      typeof body === 'string' || Buffer.isBuffer(body)
        ? body
        : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    this.held.set(r.requestId, { contentType, body: held }, typeof body === 'string' ? body.length * 2 : body.length);
  }

  /** The body answered to `requestId`, text masked; undefined once it has gone (or was never held). */
  get(requestId: string): { contentType: string; body: Buffer } | undefined {
    const hit = this.held.get(requestId);
    if (!hit) return undefined;
    const { contentType, body } = hit;
    if (!TEXT_TYPE.test(contentType))
      return { contentType, body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body };
    return {
      contentType,
      body: Buffer.from(this.scrub(typeof body === 'string' ? body : body.toString('utf8')), 'utf8'),
    };
  }

  /** Total size held, in bytes (text counted at two bytes a character). */
  get bytes(): number {
    return this.held.totalBytes;
  }

  clear(): void {
    this.held.clear();
  }
}
