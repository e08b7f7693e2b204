// The judges of the gateway profile: what the client got and what reached the upstream, read side by side. Each is
// pure: a probe's observation in, the failures (or why nothing could be judged, or what was measured) out.
import type { EntryJson } from '../../domain/journal/journal.js';
import { maskKey } from '../../domain/keys.js';
import type { CheckFailure } from '../../verdict/types.js';
import type { JudgeName } from './cases.js';
import {
  answered,
  arrival,
  failed,
  first,
  inconclusive,
  isEnvelope,
  isErrorObject,
  json,
  mime,
  passed,
  sameJson,
  show,
  upstreamHeader,
  type Judge,
  type JudgeContext,
} from './judging.js';
import type { Sent } from './probe.js';
import { STREAM_JUDGES } from './judgeStreams.js';

/** The least wait between a failed attempt and a retry that counts as backing off (docs/gateway.md). */
const MIN_BACKOFF_MS = 100;

/** How much sooner than the retry-after asked a retry may come (the two ends' timers). */
const RETRY_AFTER_SLACK_MS = 50;

/** Where `client` departs from `upstream`: a member of the upstream's missing or changed (the client may have more). */
function departures(upstream: unknown, client: unknown, path = ''): string[] {
  if (upstream && client && typeof upstream === 'object' && typeof client === 'object') {
    if (Array.isArray(upstream) !== Array.isArray(client)) return [`${path || '(body)'}: ${show(client)}`];
    if (Array.isArray(upstream) && upstream.length !== (client as unknown[]).length)
      return [`${path || '(body)'}: ${(client as unknown[]).length} items, the upstream's ${upstream.length}`];
    return Object.entries(upstream).flatMap(([k, v]) =>
      departures(v, (client as Record<string, unknown>)[k], path ? `${path}.${k}` : k),
    );
  }
  return sameJson(upstream, client) ? [] : [`${path || '(body)'}: ${show(client)}, the upstream's ${show(upstream)}`];
}

/** The fields the client sent that the upstream must get as sent: every one but those the gateway may rewrite. */
function forwardingProblems(sent: Readonly<Record<string, unknown>>, got: unknown, ctx: JudgeContext): string[] {
  const received = (got && typeof got === 'object' ? got : {}) as Record<string, unknown>;
  const out: string[] = [];
  for (const [field, value] of Object.entries(sent)) {
    // stream_options is not the API document's: a gateway may drop it.
    if (field === 'stream_options' || ctx.rewrites.includes(field)) continue;
    const alias = field === 'model' && typeof value === 'string' ? ctx.modelAliases[value] : undefined;
    const wanted = alias ?? value;
    if (!sameJson(received[field], wanted))
      out.push(
        `${field}: sent ${show(value)}${alias ? ` (${show(alias)} by --model-alias)` : ''}, the upstream got ${show(received[field])}`,
      );
  }
  return out;
}

const forward: Judge = (gc, obs, ctx) => {
  const x = first(obs)!;
  if (!x.upstream.length)
    return failed([
      {
        check: 'upstream',
        expected: 'the request at the upstream',
        actual: `it never reached the upstream; the client got ${answered(x)}`,
      },
    ]);
  const failures: CheckFailure[] = [];
  const firstAttempt = x.upstream[0]!;
  const problems = forwardingProblems(x.request.body, json(firstAttempt.request?.body), ctx);
  if (problems.length)
    failures.push({
      check: 'forwarded',
      expected: "the client's parameters at the upstream as sent",
      actual: problems.join('; '),
    });
  const last = x.upstream[x.upstream.length - 1]!;
  const streamed = x.request.streamed;
  if (last.status < 200 || last.status > 299)
    failures.push({
      check: 'upstream',
      expected: 'the upstream answers the forwarded request 200',
      actual: `the upstream answered ${last.status}${last.errorCode ? ` (${last.errorCode})` : ''}`,
    });
  else if (
    x.ex.error ||
    x.ex.status !== last.status ||
    (streamed && mime(x.ex.headers['content-type']) !== 'text/event-stream')
  )
    failures.push({
      check: 'status',
      expected: `status ${last.status}${streamed ? ' with the event stream' : ''}, as the upstream answered`,
      actual: answered(x),
    });
  // Told only when the gateway retried: a pass says nothing else worth a line.
  const attempts = x.upstream.length > 1 ? `${x.upstream.length} attempts reached the upstream` : undefined;
  return failures.length ? failed(failures, attempts) : passed(attempts);
};

const answer: Judge = async (_gc, obs, ctx) => {
  const x = first(obs)!;
  const up = x.upstream[x.upstream.length - 1];
  if (!up)
    return inconclusive(
      `the request did not reach the upstream: the client got ${answered(x)} (the forward case judges that)`,
    );
  if (x.ex.error || x.ex.status !== up.status)
    return inconclusive(
      `the client got ${answered(x)}; the upstream answered ${up.status} (the forward case judges that)`,
    );
  const failures: CheckFailure[] = [];
  const theirs = mime(upstreamHeader(up, 'content-type'));
  const ours = mime(x.ex.headers['content-type']);
  if (theirs && ours !== theirs)
    failures.push({
      check: 'answer',
      expected: `content-type ${theirs}, as the upstream answered`,
      actual: ours || 'none',
    });
  if (up.responseBytes !== undefined) {
    const bytes = await ctx.upstreamBody(up);
    if (bytes ? !bytes.equals(x.ex.body) : x.ex.body.length !== up.responseBytes)
      failures.push({
        check: 'answer',
        expected: `the upstream's ${up.responseBytes} bytes`,
        actual: `${x.ex.body.length} bytes${bytes ? ', not the same' : ''}`,
      });
    return failed(failures);
  }
  if (up.responseBody === undefined || (up.responseBodyChars ?? 0) > up.responseBody.length)
    return failures.length ? failed(failures) : inconclusive("the upstream's journal kept only part of its answer");
  const problems = departures(json(up.responseBody), json(x.ex.body.toString('utf8')));
  if (problems.length)
    failures.push({
      check: 'answer',
      expected: "every member of the upstream's answer, with its value",
      actual: problems.slice(0, 4).join('; ') + (problems.length > 4 ? `; and ${problems.length - 4} more` : ''),
    });
  return failed(failures);
};

/** Whether a status is one of those accepted, 500 standing for every 5xx. */
const accepts = (accept: readonly number[], status: number): boolean =>
  accept.includes(status) || (accept.includes(500) && status >= 500 && status <= 599);

const acceptText = (accept: readonly number[]): string =>
  accept.map((s) => (s === 500 ? 'a 5xx' : `status ${s}`)).join(' or ');

const attemptsText = (entries: readonly EntryJson[]): string =>
  `the upstream answered ${entries.map((e) => e.status).join(', ')} (${entries.length} attempt${entries.length === 1 ? '' : 's'})`;

const errorStatus: Judge = (gc, obs) => {
  const x = first(obs)!;
  if (!x.upstream.length) return inconclusive(`the request never reached the upstream: the client got ${answered(x)}`);
  const accept = gc.accept ?? [];
  if (!x.ex.error && accepts(accept, x.ex.status))
    return passed(x.upstream.length > 1 ? attemptsText(x.upstream) : undefined);
  return failed(
    [{ check: 'status', expected: `${acceptText(accept)} (${attemptsText(x.upstream)})`, actual: answered(x) }],
    attemptsText(x.upstream),
  );
};

const validRetryAfter = (v: string | undefined) =>
  v !== undefined && (/^\d+$/.test(v.trim()) || !Number.isNaN(Date.parse(v)));

const retryAfter: Judge = (gc, obs) => {
  const missing: string[] = [];
  const kept: string[] = [];
  for (const o of obs) {
    const x = o.sent[0]!;
    const up = x.upstream[x.upstream.length - 1];
    const theirs = up && upstreamHeader(up, 'retry-after');
    if (!theirs || x.ex.status < 400) continue;
    const ours = x.ex.headers['retry-after'];
    if (validRetryAfter(ours)) kept.push(`${up.status}: retry-after ${ours}`);
    else
      missing.push(
        `the upstream's ${up.status} said retry-after: ${theirs}; the client's ${x.ex.status} ${ours === undefined ? 'had none' : `had ${JSON.stringify(ours)}`}`,
      );
  }
  if (missing.length)
    return failed([
      {
        check: 'retry-after',
        expected: "the upstream's retry-after on the client's answer",
        actual: missing.join('; '),
      },
    ]);
  return kept.length ? passed() : inconclusive('no error with retry-after reached the client from the upstream');
};

const envelope: Judge = (gc, obs, ctx) => {
  const bare: string[] = [];
  let judged = 0;
  for (const o of obs) {
    const x = o.sent[0]!;
    if (!x.upstream.length || x.ex.error || x.ex.status < 400) continue;
    judged++;
    if (!isEnvelope(x.ex, ctx.registry))
      bare.push(`the upstream's ${x.upstream[x.upstream.length - 1]!.status} as ${answered(x)}`);
  }
  if (bare.length)
    return failed([
      {
        check: 'error-envelope',
        expected: 'the error envelope {"error":{"message","type","param","code"}} as application/json',
        actual: bare.join('; '),
      },
    ]);
  return judged ? passed() : inconclusive('no error of the upstream reached the client');
};

/** Whether a body is the one the upstream answered: its text as journalled (whole), or its bytes while the mock holds
 * them. */
async function sameBody(up: EntryJson, body: Buffer, ctx: JudgeContext): Promise<boolean> {
  if (up.responseBytes === undefined)
    return (
      up.responseBody !== undefined &&
      (up.responseBodyChars ?? 0) <= up.responseBody.length &&
      body.toString('utf8') === up.responseBody
    );
  return (await ctx.upstreamBody(up))?.equals(body) ?? false;
}

const malformed: Judge = async (_gc, obs, ctx) => {
  const x = first(obs)!;
  const up = x.upstream[x.upstream.length - 1];
  if (!up) return inconclusive(`the request never reached the upstream: the client got ${answered(x)}`);
  const expected =
    'a 5xx whose JSON body has an "error" object with a "message", or the upstream\'s broken body unchanged';
  if (!x.ex.error && x.ex.status >= 500 && x.ex.status <= 599) {
    if (isErrorObject(x.ex)) return passed(`answered ${x.ex.status} with an error a client can read`);
    return failed([{ check: 'error-envelope', expected, actual: `${answered(x)} (no "error" object with a message)` }]);
  }
  if (!x.ex.error && x.ex.status === up.status && (await sameBody(up, x.ex.body, ctx)))
    return passed("relayed the upstream's broken body unchanged");
  return failed([{ check: 'status', expected, actual: answered(x) }]);
};

const outOfRange: Judge = (gc, obs) => {
  const x = first(obs)!;
  const field = gc.field!;
  const sent = x.request.body[field];
  const got = x.upstream.length
    ? (json(x.upstream[0]!.request?.body) as Record<string, unknown> | undefined)?.[field]
    : undefined;
  const failures: CheckFailure[] = [];
  if (x.upstream.length && !sameJson(got, sent))
    failures.push({
      check: 'forwarded',
      expected: `${field} ${show(sent)} at the upstream as sent, or not sent on`,
      actual: `the upstream got ${field} ${show(got)} and answered ${x.upstream[0]!.status}`,
    });
  if (x.ex.error || x.ex.status !== 400)
    failures.push({ check: 'status', expected: 'status 400', actual: answered(x) });
  const where = x.upstream.length ? `the upstream got ${field} ${show(got)}` : 'the gateway answered it itself';
  return failures.length ? failed(failures, where) : passed(where);
};

/** The upstream's attempts in the order they arrived, and the waits before each retry (from the attempt before's end). */
function attempts(x: Sent): { entries: EntryJson[]; waits: number[] } {
  const entries = [...x.upstream].sort((a, b) => arrival(a) - arrival(b));
  const waits = entries.slice(1).map((e, i) => Math.round(arrival(e) - entries[i]!.time));
  return { entries, waits };
}

const retriesRetryAfter: Judge = (gc, obs) => {
  const x = first(obs)!;
  const { entries, waits } = attempts(x);
  if (!entries.length) return inconclusive(`the request never reached the upstream: the client got ${answered(x)}`);
  if (entries.length === 1) return passed(`the gateway did not retry (1 attempt); the client got ${x.ex.status}`);
  const asked = entries[0]!.retryAfterMs ?? 1000;
  const early = waits[0]! < asked - RETRY_AFTER_SLACK_MS;
  const told = `retried ${entries.length - 1} time${entries.length === 2 ? '' : 's'}, the first ${waits[0]} ms after the upstream's ${entries[0]!.status} with retry-after ${asked / 1000} s`;
  return early
    ? failed(
        [{ check: 'retries', expected: `a retry at least ${asked} ms after the 503 (its retry-after)`, actual: told }],
        told,
      )
    : passed(told);
};

const retriesBackoff: Judge = (gc, obs) => {
  const x = first(obs)!;
  const { entries, waits } = attempts(x);
  if (!entries.length) return inconclusive(`the request never reached the upstream: the client got ${answered(x)}`);
  if (entries.length === 1) return passed(`the gateway did not retry (1 attempt); the client got ${x.ex.status}`);
  const told = `retried ${entries.length - 1} time${entries.length === 2 ? '' : 's'}, after ${waits.join(', ')} ms`;
  return waits.some((w) => w < MIN_BACKOFF_MS)
    ? failed(
        [
          {
            check: 'retries',
            expected: `each retry at least ${MIN_BACKOFF_MS} ms after the failed attempt (a backoff)`,
            actual: told,
          },
        ],
        told,
      )
    : passed(told);
};

const secret: Judge = (gc, obs, ctx) => {
  if (ctx.keyPassthrough)
    return {
      failures: [],
      verdict: 'not-applicable',
      reason: "the gateway is documented to pass the client's key through (--key-passthrough)",
    };
  if (ctx.upstreamKeys.includes(ctx.clientKey))
    return {
      failures: [],
      verdict: 'not-applicable',
      reason:
        "the client's key is also a key the gateway may send upstream (--upstream-key, else the mock's default keys): nothing tells them apart",
    };
  const x = first(obs)!;
  const e = x.upstream[0];
  if (!e) return inconclusive(`the request never reached the upstream: the client got ${answered(x)}`);
  const mask = maskKey(ctx.clientKey);
  const own = ctx.upstreamKeys.map(maskKey);
  const headers = Object.entries(e.request?.headers ?? {});
  const texts: [string, string][] = [...headers, ['the body', e.request?.body ?? '']];
  const raw = texts.find(([, v]) => v.includes(ctx.clientKey));
  const masked = e.keyLabel === mask ? ['authorization', `Bearer ${mask}`] : texts.find(([, v]) => v.includes(mask));
  const expected = "the gateway's own key at the upstream, never the client's";
  if (raw) return failed([{ check: 'secret', expected, actual: `the client's key reached the upstream in ${raw[0]}` }]);
  if (masked && !own.includes(mask))
    return failed([
      {
        check: 'secret',
        expected,
        actual: `the upstream got the client's key (its journal shows it masked, ${mask}) in ${masked[0]}`,
      },
    ]);
  if (masked)
    return inconclusive(
      `the client's key and the gateway's upstream key look the same masked (${mask}: the first and last four characters); choose keys that differ there`,
    );
  if (!e.keyLabel && e.status === 401)
    return inconclusive(
      "the upstream refused the key it got (401), so its journal cannot name it: the mock must accept the keys in play (--upstream-key for the gateway's; a mock of your own: serve --api-key for each, the client's too)",
    );
  return passed(`the upstream got ${e.keyLabel ? `the key ${e.keyLabel}` : 'no key it knows'}, not the client's`);
};

export const JUDGES: Readonly<Record<JudgeName, Judge>> = {
  forward,
  answer,
  'out-of-range': outOfRange,
  'error-status': errorStatus,
  malformed,
  'retry-after': retryAfter,
  envelope,
  'retries-retry-after': retriesRetryAfter,
  'retries-backoff': retriesBackoff,
  secret,
  ...STREAM_JUDGES,
};
