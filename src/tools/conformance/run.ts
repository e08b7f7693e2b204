import type { SchemaRegistry } from '../../contract/schemas.js';
import { BODY_CHECKS, evaluate } from '../../verdict/checks.js';
import { derivedSecrets } from './credentials.js';
import { fetchMedia, send, shownRequest, type OutgoingRequest, type Target } from './http.js';
import { cleanResult, cleanText, shortBody, shownAnswer, type Secret } from './mask.js';
import { maskKey } from '../../domain/keys.js';
import { packageLimits } from '../../domain/limits.js';
import { compareExchanges } from '../../verdict/baseline.js';
import type { Case, CaseResult, CheckFailure, Exchange } from '../../verdict/types.js';

/** Everything a run needs besides the cases. */
interface RunSettings extends Target {
  readonly registry: SchemaRegistry;
  readonly concurrency: number;
  /** Extra attempts for a free case after a 429 or a transport error. */
  readonly retries: number;
  /** The longest retry-after the runner waits for; a longer one makes the case inconclusive at once. */
  readonly maxRetryWaitMs: number;
  readonly faultHeaders: boolean;
  /** Operations and tags the target does not offer. */
  readonly unsupported: ReadonlySet<string>;
  readonly imageModel: string;
  /** The image model takes at most n = 1 whatever its id (--image-n-max-1). */
  readonly imageNMax1?: boolean;
  /**
   * The `response_format` values the image model takes, from the mock's catalogue; undefined for a model
   * the catalogue does not list, which is taken to accept every value the request schema allows.
   */
  readonly imageResponseFormats?: readonly string[];
  /** A departure from a `should` case is a warning (the documented profile without --strict), else a failure. */
  readonly shouldWarns?: boolean;
  /** The implementation each case is also sent to (--baseline), to list where the target's answers depart from it. */
  readonly baseline?: Target;
}

/** What notApplicable reads of the settings. */
export type Applicability = Pick<
  RunSettings,
  'unsupported' | 'faultHeaders' | 'imageModel' | 'imageNMax1' | 'imageResponseFormats'
>;

/** Why a case does not apply to this target, or undefined when it does. */
export function notApplicable(c: Case, s: Applicability): string | undefined {
  const missing = [c.operation, ...c.tags].find((t) => s.unsupported.has(t));
  if (missing) return `the target does not offer ${missing} (--unsupported)`;
  if (c.requires?.faultHeaders && !s.faultHeaders) return "the target does not support the mock's fault headers";
  if (c.requires?.imageModel && !s.imageNMax1 && !c.requires.imageModel.includes(s.imageModel)) {
    return `the rule applies to ${c.requires.imageModel.join(', ')}; the image model is ${s.imageModel} (--image-n-max-1 says it is the named model)`;
  }
  const format = c.requires?.imageResponseFormat;
  const formats = s.imageResponseFormats;
  if (format !== undefined && formats && !formats.includes(format)) {
    const takes = formats.length
      ? `takes response_format ${formats.join(' or ')}, not ${format}`
      : 'does not take response_format';
    return `the image model ${s.imageModel} ${takes} (the mock's model catalogue, fixtures/models.json)`;
  }
  return undefined;
}

/** Free cases first, then paid ones from the cheapest; the order within each is the suite's. */
export function orderCases(cases: readonly Case[]): Case[] {
  const weight = (c: Case) =>
    c.billable ? 1 + c.cost.tokens / 1000 + c.cost.images + c.cost.videoSeconds / 4 + c.cost.characters / 1000 : 0;
  return [...cases].sort((a, b) => weight(a) - weight(b));
}

/** Seconds in a retry-after header (a number or an HTTP date), 1 when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number {
  if (value && /^\d+(\.\d+)?$/.test(value.trim())) return Number(value) * 1000;
  const date = value ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? 1000 : Math.max(0, date - now);
}

/**
 * What no report may show of a run: the key, every credential derived from it (shown as the key's own
 * mask), and the --header values that look like secrets.
 */
export function runSecrets(
  target: Pick<Target, 'apiKey' | 'headerSecrets'> & { readonly baseline?: Pick<Target, 'apiKey'> },
): Secret[] {
  const keys = [target.apiKey, ...(target.baseline ? [target.baseline.apiKey] : [])];
  return [
    ...keys.flatMap((key) => {
      const masked = maskKey(key);
      return [key, ...derivedSecrets(key).map((value) => ({ value, masked }))];
    }),
    ...(target.headerSecrets ?? []),
  ];
}

const TRANSPORT_PAUSE_MS = 250;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs one case and, with a baseline, sends the same request there once and lists where the target's last answer
 * departs from the baseline's. A case not sent to the target is not sent to the baseline either.
 */
async function runCompared(c: Case, s: RunSettings, secrets: readonly Secret[]): Promise<CaseResult> {
  const sent: { ex?: Exchange } = {};
  const result = await runCase(c, s, secrets, sent);
  if (!s.baseline || !sent.ex) return result;
  const streamed =
    c.expect.checks.includes('sse') || (c.request.body as { stream?: unknown } | undefined)?.stream === true;
  const theirs = await send(s.baseline, { ...c.request, streamed });
  const departures = compareExchanges(sent.ex, theirs, streamed).map((d) => ({
    ...d,
    target: cleanText(d.target, secrets),
    baseline: cleanText(d.baseline, secrets),
  }));
  return { ...result, ...(departures.length ? { departures } : {}), baselineResponse: shownAnswer(theirs, secrets) };
}

/**
 * A request as a report shows it: the key's mask where the key went, its body with long strings cut; undefined
 * `display` when the key allows no such near miss (then shown as if sent without a key).
 */
export function shownCaseRequest(
  target: Target,
  request: OutgoingRequest,
): { display: boolean; shown: NonNullable<CaseResult['request']> } {
  const display = shownRequest(target, request);
  return {
    display: display !== undefined,
    shown: {
      ...(display ?? shownRequest(target, { ...request, auth: 'missing' })!),
      ...(request.body !== undefined || request.raw !== undefined
        ? { body: shortBody(request.raw ?? request.body) }
        : {}),
    },
  };
}

/** Sends one case, retrying a free one after a 429 or transport error that it does not test, and judges it. */
async function runCase(
  c: Case,
  s: RunSettings,
  secrets: readonly Secret[],
  sent: { ex?: Exchange },
): Promise<CaseResult> {
  const started = performance.now();
  const { request } = c;
  const streamed = c.expect.checks.includes('sse');
  const outgoing = { ...request, streamed };
  // The request as reports show it: the key's mask where the key went.
  const { display, shown } = shownCaseRequest(s, outgoing);
  let ex: Exchange | undefined;
  // Every result leaves through here, cleaned: no reporter sees the target's bytes raw, nor the key.
  const done = (rest: Omit<CaseResult, 'case' | 'request' | 'ms'>): CaseResult =>
    cleanResult(
      {
        case: c,
        request: shown,
        ms: Math.round(performance.now() - started),
        ...rest,
        ...(ex ? { response: shownAnswer(ex, secrets) } : {}),
      },
      secrets,
    );
  const na = display
    ? notApplicable(c, s)
    : 'the key allows no such near miss (its letters have no case, or it is too short to cut)';
  if (na) return done({ verdict: 'not-applicable', reason: na, failures: [], attempts: 0 });
  const attemptsAllowed = c.billable ? 1 : 1 + s.retries;
  let reason = '';
  let attempts = 0;
  for (let attempt = 1; attempt <= attemptsAllowed; attempt++) {
    attempts = attempt;
    ex = sent.ex = await send(s, outgoing);
    const limited = ex.status === 429 && !c.tests429;
    if (!ex.error && !limited) {
      let failures: CheckFailure[];
      try {
        failures = await evaluate(c, ex, {
          registry: s.registry,
          limits: packageLimits(s.registry),
          timeoutMs: s.timeoutMs,
          maxBodyBytes: s.maxBodyBytes,
          secrets: [s.apiKey],
          mediaAllowPrivate: s.mediaAllowPrivate,
          fetchMedia,
        });
      } catch (err) {
        // A check that chokes on what a target sent is the runner's limit, not a verdict; the run goes on.
        return done({
          verdict: 'inconclusive',
          reason: `the runner could not judge the answer: ${(err as Error).message}`,
          status: ex.status,
          failures: [],
          attempts: attempt,
        });
      }
      const departed = c.level === 'should' && s.shouldWarns ? 'warn' : 'fail';
      if (failures.length || !ex.incomplete)
        return done({ verdict: failures.length ? departed : 'pass', status: ex.status, failures, attempts: attempt });
      // The status and headers passed; the body was cut short (the cap fails body checks in evaluate).
      // An answer was read, so it is judged, not retried: a timeout leaves the body checks unjudged.
      const unjudged = c.expect.checks.filter((check) => BODY_CHECKS.has(check));
      if (unjudged.length)
        return done({
          verdict: 'inconclusive',
          reason: `the body ${ex.incomplete.detail}; the ${unjudged.join(', ')} check${unjudged.length > 1 ? 's' : ''} need${unjudged.length > 1 ? '' : 's'} all of it`,
          status: ex.status,
          failures,
          attempts: attempt,
        });
      return done({
        verdict: 'pass',
        reason: `judged on the status and headers; the body ${ex.incomplete.detail}`,
        status: ex.status,
        failures,
        attempts: attempt,
      });
    }
    reason = ex.error ? `transport error: ${ex.error}` : 'rate limited (429)';
    if (c.billable) {
      reason += '; paid cases are not retried';
      break;
    }
    if (attempt === attemptsAllowed) {
      if (attemptsAllowed > 1) reason += ` on each of ${attemptsAllowed} attempts`;
      break;
    }
    // A dropped connection is retried after a short pause; a 429 after the time the server asked for.
    const wait = limited ? retryAfterMs(ex.headers['retry-after']) : TRANSPORT_PAUSE_MS;
    if (wait > s.maxRetryWaitMs) {
      reason += `; retry-after ${Math.round(wait / 1000)} s is longer than the ${Math.round(s.maxRetryWaitMs / 1000)} s the runner waits`;
      return done({ verdict: 'inconclusive', reason, status: ex.status, failures: [], attempts: attempt });
    }
    await sleep(wait);
  }
  return done({
    verdict: 'inconclusive',
    reason,
    ...(ex?.status ? { status: ex.status } : {}),
    failures: [],
    attempts,
  });
}

/** Runs cases with at most `concurrency` in flight, reporting each result as it comes. */
async function pool(
  cases: readonly Case[],
  s: RunSettings,
  limit: number,
  onResult: (r: CaseResult) => void,
): Promise<CaseResult[]> {
  const results: CaseResult[] = new Array(cases.length);
  const secrets = runSecrets(s);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      results[i] = await runCompared(cases[i]!, s, secrets);
      onResult(results[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, cases.length) }, worker));
  return results;
}

/**
 * Runs a suite: free cases before paid ones; within each, most cases `concurrency` at a time, then
 * the streaming cases one by one, so nothing else on the client delays the reads that show whether
 * a stream arrives incrementally. Results come back in the order the cases ran.
 */
export async function runSuite(
  cases: readonly Case[],
  s: RunSettings,
  onResult: (r: CaseResult) => void = () => {},
): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const ordered = orderCases(cases);
  for (const paid of [false, true]) {
    const phase = ordered.filter((c) => c.billable === paid);
    const serial = (c: Case) => c.expect.checks.includes('sse');
    results.push(
      ...(await pool(
        phase.filter((c) => !serial(c)),
        s,
        s.concurrency,
        onResult,
      )),
    );
    results.push(...(await pool(phase.filter(serial), s, 1, onResult)));
  }
  return results;
}
