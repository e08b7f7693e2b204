// A gateway run: the probes its cases read, phase by phase (docs/gateway.md), each case judged as soon as its probes
// are in, and reported through the runner's result model.
import { compareExchanges } from '../../verdict/baseline.js';
import type { CaseResult, Departure, Verdict } from '../../verdict/types.js';
import type { Target } from '../conformance/http.js';
import { cleanResult, cleanText, type Secret } from '../conformance/mask.js';
import { notApplicable, shownCaseRequest } from '../conformance/run.js';
import type { GatewayCase, Phase, Probe } from './cases.js';
import { JUDGES } from './judge.js';
import { inconclusive, unjudged, type Judgement, type JudgeContext } from './judging.js';
import { outgoing, runProbe, type Observation, type ProbeSettings } from './probe.js';
import type { Upstream } from './upstream.js';

/** The gap between the paced upstream's events in the isolation case: short and steady, so that streams overlap. */
const PACED_GAP_MS = 30;

/** The names of the latency profiles the runner puts in force on the upstream while its streams are paced. */
const PROFILES = { gap: 'uam-gateway-gap', paced: 'uam-gateway-paced' } as const;

const PHASES: readonly Phase[] = ['parallel', 'streams', 'gap', 'paced', 'hang'];

/** Everything a gateway run needs besides its cases. */
interface GatewaySettings extends ProbeSettings {
  readonly target: Target;
  /** Another gateway, in front of the same upstream, each probe is also sent through (--baseline). */
  readonly baseline?: Target;
  readonly concurrency: number;
  readonly upstream: Upstream;
  readonly upstreamGapMs: number;
  /** Operations and tags the gateway does not offer (--unsupported). */
  readonly unsupported: ReadonlySet<string>;
  /** A departure from a `should` case is a warning (without --strict). */
  readonly shouldWarns: boolean;
  readonly judge: JudgeContext;
  readonly secrets: readonly Secret[];
}

/** Runs `work` on every item with at most `limit` at once. */
async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A probe without its stream requests when the gateway does not stream (the hung upstream's case keeps the rest). */
function withoutStreams(p: Probe, unsupported: ReadonlySet<string>): Probe {
  return unsupported.has('stream') ? { ...p, requests: p.requests.filter((r) => !r.streamed) } : p;
}

/**
 * Runs the gateway cases: the not-applicable ones at once, then the probes the others read, phase by phase, each case
 * judged and reported as soon as its last probe is in. Resolves to the results in the order they came.
 */
export async function runGateway(
  cases: readonly GatewayCase[],
  probes: ReadonlyMap<string, Probe>,
  s: GatewaySettings,
  onResult: (r: CaseResult) => void = () => {},
): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  const emit = (r: CaseResult) => {
    results.push(r);
    onResult(r);
  };
  const pending: GatewayCase[] = [];
  for (const gc of cases) {
    const na = notApplicable(gc.case, { unsupported: s.unsupported, faultHeaders: true, imageModel: '' });
    if (na) emit(result(gc, [], { failures: [], verdict: 'not-applicable', reason: na }, s));
    else pending.push(gc);
  }
  const seen = new Map<string, Observation>();
  const departures = new Map<string, Departure[]>();
  // A probe's departures from the baseline are told once, on the first case that reads it.
  const owner = new Map<string, string>();
  for (const gc of pending) if (!owner.has(gc.probes[0]!)) owner.set(gc.probes[0]!, gc.case.id);
  // The cases whose probes are all in, taken from `pending` at once: probes finish concurrently.
  const judgeReady = async () => {
    const ready = pending.filter((gc) => gc.probes.every((k) => seen.has(k)));
    for (const gc of ready) pending.splice(pending.indexOf(gc), 1);
    for (const gc of ready) {
      const obs = gc.probes.map((k) => seen.get(k)!);
      const told = owner.get(gc.probes[0]!) === gc.case.id ? departures.get(gc.probes[0]!) : undefined;
      emit(result(gc, obs, await judge(gc, obs, s.judge), s, told));
    }
  };
  const needed = [...new Set(pending.flatMap((gc) => gc.probes))].map((k) =>
    withoutStreams(probes.get(k)!, s.unsupported),
  );
  for (const phase of PHASES) {
    const list = needed.filter((p) => p.phase === phase);
    if (!list.length) continue;
    const run = async (p: Probe) => {
      const obs = await runProbe(p, s.target, s);
      if (s.baseline && obs.sent[0]) {
        const theirs = await runProbe(p, s.baseline, s, 'b');
        if (theirs.sent[0]) {
          const ours = obs.sent[0];
          departures.set(
            p.key,
            compareExchanges(ours.ex, theirs.sent[0].ex, ours.request.streamed).map((d) => ({
              ...d,
              target: cleanText(d.target, s.secrets),
              baseline: cleanText(d.baseline, s.secrets),
            })),
          );
        }
      }
      seen.set(p.key, obs);
      await judgeReady();
    };
    const problem = await inPhase(phase, s, async () => {
      if (phase === 'parallel') await pool(list, s.concurrency, run);
      else if (phase === 'hang') await pool(list, list.length, run);
      else await pool(list, 1, run);
    });
    if (problem) {
      for (const p of list) seen.set(p.key, { key: p.key, sent: [], problem });
      await judgeReady();
    }
  }
  return results;
}

/**
 * Runs a phase's probes with the upstream set for it: a paced phase puts a latency profile of fixed times in force for
 * every model (nothing else is sent meanwhile), and puts the one before back after. Resolves to why the upstream could
 * not be set up (then nothing was sent), or undefined.
 */
async function inPhase(phase: Phase, s: GatewaySettings, body: () => Promise<void>): Promise<string | undefined> {
  if (phase !== 'gap' && phase !== 'paced') return void (await body());
  let before: string;
  try {
    before = await s.upstream.latencyProfile();
    await s.upstream.pace(PROFILES[phase], 0, phase === 'gap' ? s.upstreamGapMs : PACED_GAP_MS);
  } catch (err) {
    return `the upstream did not take its pacing: ${(err as Error).message}`;
  }
  try {
    await body();
  } finally {
    await s.upstream.restoreProfile(before).catch(() => {});
  }
  return undefined;
}

async function judge(gc: GatewayCase, obs: readonly Observation[], ctx: JudgeContext): Promise<Judgement> {
  const why = unjudged(obs);
  if (why) return inconclusive(why);
  try {
    return await JUDGES[gc.judge](gc, obs, ctx);
  } catch (err) {
    // A judge that chokes on what a gateway sent is the runner's limit, not a verdict; the run goes on.
    return inconclusive(`the runner could not judge the answer: ${(err as Error).message}`);
  }
}

/** A case's result as every reporter receives it, cleaned of secrets and of the gateway's unsafe characters. */
function result(
  gc: GatewayCase,
  obs: readonly Observation[],
  j: Judgement,
  s: GatewaySettings,
  departures?: readonly Departure[],
): CaseResult {
  const sent = obs.flatMap((o) => o.sent);
  const x = sent[0];
  const verdict: Verdict =
    j.verdict ?? (j.failures.length ? (gc.case.level === 'should' && s.shouldWarns ? 'warn' : 'fail') : 'pass');
  const request = x
    ? shownCaseRequest(s.target, outgoing(x.request)).shown
    : shownCaseRequest(s.target, { ...gc.case.request }).shown;
  return cleanResult(
    {
      case: gc.case,
      verdict,
      ...(j.reason ? { reason: j.reason } : {}),
      ...(x && x.ex.status ? { status: x.ex.status } : {}),
      failures: j.failures,
      attempts: sent.length,
      ms: Math.round(Math.max(0, ...sent.map((y) => y.ex.ms))),
      request,
      ...(departures?.length ? { departures } : {}),
    },
    s.secrets,
  );
}
