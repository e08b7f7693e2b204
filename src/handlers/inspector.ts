import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError, ERRORS } from '../contract/errors.js';
import type { Reply } from '../contract/reply.js';
import type { JournalEntry } from '../domain/journal/journal.js';
import { ROOT } from '../lib/paths.js';
import type { Handler } from '../pipeline/handler.js';
import { rangedReply } from '../pipeline/ranged.js';

/** Where `npm run build` writes the inspector's page, script and stylesheet. */
const INSPECTOR_DIR = join(ROOT, 'dist', 'inspector');

/**
 * The page runs only its own script and stylesheet (no inline script or style, no eval), talks only to
 * this server, and cannot be framed: a request body that holds markup can never run as code.
 */
export const INSPECTOR_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE_HEADERS = {
  'content-security-policy': INSPECTOR_CSP,
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

// Entries recorded between the subscription and the stream's start wait here; past this many, the
// oldest go (the page reads the journal itself on start).
const MAX_PENDING = 1000;

function file(name: string, contentType: string): Handler {
  return async (): Promise<Reply> => {
    let body: Buffer;
    try {
      body = await readFile(join(INSPECTOR_DIR, name));
    } catch {
      throw new ApiError(ERRORS.NOT_FOUND, {
        code: 'inspector_not_built',
        message: `The request inspector is not built (${name} is missing from dist/inspector): run npm run build.`,
      });
    }
    return { kind: 'binary', contentType, body, headers: PAGE_HEADERS };
  };
}

const page = file('index.html', 'text/html; charset=utf-8');

/** JSON that can sit in an HTML data block: no `</script>`, no comment opener, no line separators JavaScript once
 * refused. */
const inertJson = (value: unknown): string =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

/**
 * GET /__admin/: the request inspector page (docs/inspector.md), with the journal it holds now in a JSON data block
 * (never run: the CSP allows only the page's own script), so that the page's first paint lists it instead of waiting
 * for the feed. Entries recorded after it come by the feed and the page's own read, which drop duplicates.
 */
export const inspectorPage: Handler = async (ctx) => {
  const reply = (await page(ctx)) as Reply & { kind: 'binary' };
  const entries = await ctx.services.journal.entries();
  const block = `<script type="application/json" id="journal">${inertJson(entries)}</script>`;
  const html = reply.body.toString('utf8').replace('<div id="app">', `${block}\n    <div id="app">`);
  return { ...reply, body: Buffer.from(html, 'utf8') };
};
/** GET /__admin/inspector.js: the page's script, bundled at build time. */
export const inspectorScript = file('inspector.js', 'text/javascript; charset=utf-8');
/** GET /__admin/inspector.css: the page's stylesheet. */
export const inspectorStyle = file('inspector.css', 'text/css; charset=utf-8');

/** Headers of a response body served to the inspector: never a page of this origin, even when it is HTML. */
const BODY_HEADERS = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; sandbox",
  'cross-origin-resource-policy': 'same-origin',
};

/** A size in bytes as the messages show it: 32 MiB, 1.5 MiB. */
const mib = (bytes: number): string => `${Number((bytes / 1048576).toFixed(1))} MiB`;

/**
 * GET /__admin/requests/:id/body: the body a recent request was answered with, while it is held (see
 * ResponseBodies). It takes byte ranges (see rangedReply), so that a media element can seek in a long
 * video or speech.
 */
export const responseBody: Handler = ({ params, headers, services }) => {
  const id = params.id ?? '';
  const { maxQuotedChars } = services.limits.messages;
  const held = services.responseBodies.get(id);
  if (!held) {
    throw new ApiError(ERRORS.NOT_FOUND, {
      code: 'response_body_not_found',
      message: `No response body is held for request '${id.slice(0, maxQuotedChars)}': only binary and long answers are held, the most recent ${mib(services.limits.records.maxHeldResponseBytes)}.`,
    });
  }
  return rangedReply(
    headers,
    {
      contentType: held.contentType,
      body: held.body,
      headers: BODY_HEADERS,
      refusalHeaders: BODY_HEADERS,
      name: `the body of request '${id.slice(0, maxQuotedChars)}'`,
    },
    maxQuotedChars,
  );
};

/**
 * GET /__admin/requests/events: each new journal entry as an `entry` event while the client stays.
 * At most feeds.maxFollowers feeds at once (429 past that); a reader too slow to keep up is dropped (see pipeline/feed.ts).
 */
export const journalEvents: Handler = ({ services }) => {
  let send: ((event: string, data: string) => void) | undefined;
  const pending: JournalEntry[] = [];
  const { maxFollowers, heartbeatMs } = services.limits.feeds;
  const unsubscribe = services.journal.subscribe((entry) => {
    if (send) send('entry', JSON.stringify(entry));
    else if (pending.push(entry) > MAX_PENDING) pending.shift();
  }, maxFollowers);
  if (!unsubscribe) {
    throw new ApiError(ERRORS.RATE_LIMITED, {
      code: 'too_many_feeds',
      message: `Too many clients follow the journal already (${maxFollowers}); close one and retry.`,
    });
  }
  return {
    kind: 'feed',
    heartbeatMs,
    headers: { 'cache-control': 'no-store' },
    open(write) {
      send = write;
      write('ready', JSON.stringify({ capacity: services.journal.capacity, state: services.state.kind }));
      for (const entry of pending.splice(0)) write('entry', JSON.stringify(entry));
      return unsubscribe;
    },
  };
};
