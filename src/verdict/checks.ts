import { completionLimitParam } from '../contract/completionLimit.js';
import { operation, type Success } from '../contract/operations.js';
import { schemaId, type SchemaRegistry } from '../contract/schemas.js';
import { checkChatStream, parseSse } from './sse.js';
import { checkMedia, type Media, type MediaFetcher } from './mediaChecks.js';
import type { Case, CheckFailure, CheckName, Exchange, Profile } from './types.js';
import { getAt } from './pointer.js';
import type { Limits } from '../domain/limits.js';

/** What the checks need besides the exchange. */
interface CheckContext {
  readonly registry: SchemaRegistry;
  /** The checked fixtures/limits.json: the mock's defaults for what a request leaves out (an image's size, a video's
   * length). */
  readonly limits: Limits;
  readonly timeoutMs: number;
  /** The cap on each media download (the run's --max-body). */
  readonly maxBodyBytes?: number;
  /** What no media link may carry (the API key). */
  readonly secrets?: readonly string[];
  /** Media links on loopback and private addresses are fetched (the target is on one, or --media-allow-private). */
  readonly mediaAllowPrivate?: boolean;
  /**
   * How a linked media file is fetched (the runner passes its fetchMedia). Without it no link is
   * fetched, and a check that needs the file fails saying so: the validating proxy runs none of those.
   */
  readonly fetchMedia?: MediaFetcher;
}

const unfetched = async (): Promise<Media> => ({ error: 'no media fetcher was given to the checks' });

/** The checks that read the body; the others need only the status and headers. */
export const BODY_CHECKS: ReadonlySet<CheckName> = new Set<CheckName>([
  'error-envelope',
  'error-param',
  'success-schema',
  'sse',
  'usage',
  'stop',
  'seed',
  'png-size',
  'audio',
  'mp4',
]);

// The check of each kind of media a success delivers (the operation row's success.media).
const MEDIA_CHECK: Readonly<Record<NonNullable<Success['media']>, CheckName>> = {
  png: 'png-size',
  mp4: 'mp4',
  audio: 'audio',
};

/**
 * The checks a case runs in a profile. `documented` checks the status alone: the API document shows
 * no response body, header or error shape. `full` adds the mock's wire decisions: x-request-id, the
 * error envelope (and, on a 400 for one field, its `param` naming that field), WWW-Authenticate on
 * 401, retry-after on 429, content types, the success schemas, the stream grammar, the token usage of
 * an operation billed in tokens, a reply free of the request's stop sequences, the seed an answer
 * echoes, and the media bytes.
 */
export function checksFor(c: Pick<Case, 'operation' | 'expect' | 'request' | 'field'>, profile: Profile): CheckName[] {
  if (profile === 'documented') return ['status'];
  const { status } = c.expect;
  const out = new Set<CheckName>(['status', 'request-id']);
  if (status >= 400) out.add('error-envelope');
  if (status === 400 && c.field) out.add('error-param');
  if (status === 401) out.add('www-authenticate');
  if (status === 429) out.add('retry-after');
  if (status === 200) {
    const op = operation(c.operation);
    out.add('content-type');
    const body = c.request.body as { stream?: unknown; stream_options?: { include_usage?: unknown } } | undefined;
    const streamed = body?.stream === true;
    if (streamed) out.add('sse');
    else if (op.success.schema) out.add('success-schema');
    // A stream reports its usage only when asked to (stream_options.include_usage), in its last chunk.
    if (op.billing?.unit === 'tokens' && (!streamed || body?.stream_options?.include_usage === true)) out.add('usage');
    if (stopSequences(body).length) out.add('stop');
    if (op.success.seedAt && seedOf(body) !== undefined) out.add('seed');
    const kind = op.success.media;
    const media = kind && MEDIA_CHECK[kind];
    if (media && !streamed) out.add(media);
  }
  for (const extra of c.expect.checks) out.add(extra);
  return [...out];
}

// The start of a body shown in a failure; only this much is decoded, whatever the body's size.
const EXCERPT_BYTES = 2048;

const excerpt = (ex: Exchange): string => {
  const type = ex.headers['content-type'] ?? '';
  if (!/json|text/.test(type))
    return ex.body.length ? `(${ex.body.length}${ex.incomplete ? '+' : ''} bytes of ${type || 'unknown type'})` : '';
  const text = ex.body.subarray(0, EXCERPT_BYTES).toString('utf8').replace(/\s+/g, ' ');
  return text.length > 200 || ex.body.length > EXCERPT_BYTES || ex.incomplete ? `${text.slice(0, 200)}...` : text;
};

// The bytes a JSON text may start with (after blanks): { [ " - 0-9 t f n.
const JSON_START = new Set([...'{["-0123456789tfn'].map((ch) => ch.charCodeAt(0)));
const BLANKS = new Set([0x20, 0x09, 0x0a, 0x0d]);

function json(ex: Exchange): unknown {
  if (ex.incomplete) return undefined; // a body cut short is no JSON document; nobody decodes megabytes to learn that
  // Nor is one that cannot start a JSON text: megabytes of noise are not decoded into a string to fail at byte one.
  const first = ex.body.find((byte) => !BLANKS.has(byte));
  if (first === undefined || !JSON_START.has(first)) return undefined;
  try {
    return JSON.parse(ex.body.toString('utf8'));
  } catch {
    return undefined;
  }
}

const mime = (type: string | undefined) => (type ?? '').split(';')[0]!.trim().toLowerCase();

function schemaProblem(registry: SchemaRegistry, id: string, value: unknown): string | undefined {
  const errors = registry.check(id, value);
  return errors.length ? `${errors[0]!.instancePath || '(body)'} ${errors[0]!.message}` : undefined;
}

const isCount = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;

/**
 * What is wrong with a token answer's `usage`: a total that is not the sum of its parts, or more tokens
 * generated than the request's `max_tokens` (or `max_completion_tokens`) allows. A gateway that drops
 * the limit on its way to the model answers 200 all the same, and every call then costs more than the
 * caller capped it at. A body without usage counts is left to the success schema.
 */
function usageProblems(body: unknown, answer: unknown): string[] {
  const usage = (answer as { usage?: Record<string, unknown> } | undefined)?.usage;
  const { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total } = usage ?? {};
  if (!isCount(prompt) || !isCount(completion) || !isCount(total)) return [];
  const problems: string[] = [];
  if (total !== prompt + completion)
    problems.push(`total_tokens ${total} is not prompt_tokens ${prompt} + completion_tokens ${completion}`);
  const request =
    body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const param = completionLimitParam(request);
  const limit = request[param];
  if (typeof limit === 'number' && completion > limit)
    problems.push(`completion_tokens ${completion} is over the request's ${param} of ${limit}`);
  return problems;
}

/** The usage a stream reports when asked to (stream_options.include_usage): there, and right by usageProblems. */
function streamUsageProblems(body: unknown, stream: Buffer): string[] {
  // The last usage counts, as a client keeps the last one it reads.
  let usage: unknown;
  for (const e of parseSse(stream.toString('utf8')).events) {
    if (e.data === '[DONE]') continue;
    try {
      usage = (JSON.parse(e.data) as { usage?: unknown } | null)?.usage ?? usage;
    } catch {
      // Not JSON: the stream grammar check says so.
    }
  }
  if (usage === undefined) return ['no chunk carries usage, though the request set stream_options.include_usage'];
  return usageProblems(body, { usage });
}

/** The names in a field's path, whatever its notation: `/messages/0/role`, `messages[0].role` and `messages.[0].role`
 * are messages, 0, role. */
const pathNames = (path: string): string[] => path.split(/[./[\]]+/).filter(Boolean);

/**
 * Whether an error's `param` names the field a request broke: the field itself or a member it belongs
 * to (`messages` for `messages[0].role`), in any of the usual notations; never null, and never the body.
 */
function namesField(param: unknown, field: string): boolean {
  if (typeof param !== 'string') return false;
  const named = pathNames(param);
  const wanted = pathNames(field);
  return named.length > 0 && named.length <= wanted.length && named.every((name, i) => name === wanted[i]);
}

/** A request's seed when it is one an answer can echo as it is: a whole number from 0 to 2^32 - 1. */
function seedOf(body: unknown): number | undefined {
  const seed = body !== null && typeof body === 'object' ? (body as { seed?: unknown }).seed : undefined;
  return Number.isInteger(seed) && (seed as number) >= 0 && (seed as number) < 2 ** 32 ? (seed as number) : undefined;
}

/**
 * The stop sequences a request sets: the non-empty strings of its `stop` (a list, or one string as OpenAI also takes).
 */
function stopSequences(body: unknown): string[] {
  const stop = body !== null && typeof body === 'object' ? (body as { stop?: unknown }).stop : undefined;
  const list: unknown[] = typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop : [];
  return list.filter((s): s is string => typeof s === 'string' && s !== '');
}

/** The text of each choice: its message's content, or a stream's delta contents joined in order. */
function choiceTexts(ex: Exchange, streamed: boolean): Map<number, string> {
  const texts = new Map<number, string>();
  const add = (choice: unknown, part: 'message' | 'delta') => {
    const { index, [part]: said } = (choice ?? {}) as {
      index?: unknown;
      message?: { content?: unknown };
      delta?: { content?: unknown };
    };
    const content = said?.content;
    if (typeof index === 'number' && typeof content === 'string') texts.set(index, (texts.get(index) ?? '') + content);
  };
  if (!streamed) {
    const choices = (json(ex) as { choices?: unknown } | null | undefined)?.choices;
    if (Array.isArray(choices)) for (const choice of choices) add(choice, 'message');
    return texts;
  }
  for (const e of parseSse(ex.body.toString('utf8')).events) {
    if (e.data === '[DONE]') continue;
    try {
      const chunk = JSON.parse(e.data) as { choices?: unknown } | null;
      if (Array.isArray(chunk?.choices)) for (const choice of chunk.choices) add(choice, 'delta');
    } catch {
      // Not JSON: the stream grammar check says so.
    }
  }
  return texts;
}

/**
 * What is wrong with a reply given stop sequences: a choice's text that contains one. Generation ends
 * before a stop sequence and the sequence is not returned, so no correct reply holds one, whatever the
 * model; a gateway that drops `stop` on its way to the model, or cuts after the sequence, returns it.
 */
function stopProblems(body: unknown, ex: Exchange, streamed: boolean): string[] {
  const stops = stopSequences(body);
  const problems: string[] = [];
  for (const [index, text] of choiceTexts(ex, streamed)) {
    const hit = stops.find((s) => text.includes(s));
    if (hit !== undefined)
      problems.push(
        `choice ${index}'s content holds the stop sequence ${JSON.stringify(hit)} at character ${text.indexOf(hit)}: ${JSON.stringify(text.slice(0, 120))}`,
      );
  }
  return problems;
}

/**
 * Runs a case's checks on what came back; returns the failures (empty when the case passes).
 *
 * A body that is incomplete (see Exchange.incomplete) has a real status and real headers: those
 * checks run as always, so a wrong status is a failure whatever the body does, and a case that checks
 * only the status (every case of `documented`) is judged on it; an endless body behind a correct
 * status is no false alarm there. The checks that read the body (BODY_CHECKS) cannot judge part of
 * one: past the cap (16 MiB by default) they fail, because no answer of this API comes near it and a
 * body that exceeds it is the target's doing (oversized or endless); after the timeout they are skipped and the
 * runner calls the case inconclusive, because a slow body and an endless one look the same.
 */
export async function evaluate(c: Case, ex: Exchange, ctx: CheckContext): Promise<CheckFailure[]> {
  const failures: CheckFailure[] = [];
  const fail = (check: CheckName, expected: string, actual: string) => failures.push({ check, expected, actual });
  const cutShort = ex.incomplete ? ` (the body ${ex.incomplete.detail})` : '';
  if (ex.status !== c.expect.status) {
    // The note first: escaping can make a noisy excerpt long enough to be cut at the reports' bound.
    fail('status', `status ${c.expect.status}`, `status ${ex.status}${cutShort} ${excerpt(ex)}`.trim());
    return failures; // the other checks describe a response of the expected kind
  }
  const op = operation(c.operation);
  for (const check of c.expect.checks) {
    if (ex.incomplete && BODY_CHECKS.has(check)) {
      if (ex.incomplete.cause === 'cap')
        fail(check, `a complete body for the ${check} check`, `the body ${ex.incomplete.detail}: ${excerpt(ex)}`);
      continue;
    }
    switch (check) {
      case 'request-id':
        if (!ex.headers['x-request-id']) fail(check, 'an x-request-id header', 'none');
        break;
      case 'error-envelope': {
        const problem =
          mime(ex.headers['content-type']) !== 'application/json'
            ? `content-type ${ex.headers['content-type'] ?? 'none'}`
            : schemaProblem(ctx.registry, schemaId('error.json'), json(ex));
        if (problem)
          fail(
            check,
            'the error envelope {"error":{"message","type","param","code"}} as application/json',
            `${problem}: ${excerpt(ex)}`,
          );
        break;
      }
      case 'error-param': {
        const param = (json(ex) as { error?: { param?: unknown } } | null | undefined)?.error?.param;
        const field = c.field ?? '';
        if (!namesField(param, field))
          fail(
            check,
            `error.param naming ${pathNames(field).join('.')} (or a member it belongs to), the field the request broke`,
            `param ${JSON.stringify(param) ?? 'absent'}: ${excerpt(ex)}`,
          );
        break;
      }
      case 'www-authenticate':
        if (!/^bearer\b/i.test(ex.headers['www-authenticate'] ?? ''))
          fail(check, 'WWW-Authenticate: Bearer', ex.headers['www-authenticate'] ?? 'none');
        break;
      case 'retry-after': {
        const value = ex.headers['retry-after'];
        if (!value || !(/^\d+$/.test(value) || !Number.isNaN(Date.parse(value))))
          fail(check, 'a retry-after header (seconds or an HTTP date)', value ?? 'none');
        break;
      }
      case 'content-type': {
        const wanted = c.expect.checks.includes('sse') ? 'text/event-stream' : op.success.contentType;
        if (mime(ex.headers['content-type']) !== wanted)
          fail(check, `content-type ${wanted}`, ex.headers['content-type'] ?? 'none');
        break;
      }
      case 'success-schema': {
        const problem = schemaProblem(ctx.registry, op.success.schema!, json(ex));
        if (problem)
          fail(check, `a body matching schemas/${op.success.schema!.split('/').pop()}`, `${problem}: ${excerpt(ex)}`);
        break;
      }
      case 'usage': {
        const problems = c.expect.checks.includes('sse')
          ? streamUsageProblems(c.request.body, ex.body)
          : usageProblems(c.request.body, json(ex));
        if (problems.length)
          fail(
            check,
            "usage that adds up (total_tokens = prompt_tokens + completion_tokens) within the request's completion limit",
            problems.join('; '),
          );
        break;
      }
      case 'stop': {
        const problems = stopProblems(c.request.body, ex, c.expect.checks.includes('sse'));
        if (problems.length)
          fail(
            check,
            'a reply that holds none of the stop sequences (generation ends before one)',
            problems.join('; '),
          );
        break;
      }
      case 'seed': {
        // Where the answer has no seed yet (a video task still queued), there is nothing to compare.
        const at = operation(c.operation).success.seedAt!;
        const got = getAt(json(ex), at);
        const seed = seedOf(c.request.body);
        if (got !== undefined && got !== null && got !== seed)
          fail(
            check,
            `the request's seed ${seed} at ${at} (the answer echoes the seed it used)`,
            `${JSON.stringify(got)}: ${excerpt(ex)}`,
          );
        break;
      }
      case 'sse': {
        const problems = checkChatStream(ex.body, ex.reads, ex.ms, (chunk) =>
          schemaProblem(ctx.registry, schemaId('chat-completion-chunk.json'), chunk),
        );
        if (problems.length)
          fail(
            check,
            'a chat.completion.chunk event stream ending in one data: [DONE], delivered incrementally',
            problems.join('; '),
          );
        break;
      }
      default: {
        const how = {
          timeoutMs: ctx.timeoutMs,
          maxBytes: ctx.maxBodyBytes,
          secrets: ctx.secrets,
          allowPrivate: ctx.mediaAllowPrivate,
        };
        const fetch = (url: string) => (ctx.fetchMedia ?? unfetched)(url, how);
        const problem = await checkMedia(check, c, ex, json(ex), fetch, ctx.limits);
        if (problem) fail(check, problem.expected, problem.actual);
      }
    }
  }
  return failures;
}
