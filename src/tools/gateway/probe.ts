// One probe: its fault rules put on the upstream, its requests sent through the gateway together, then what reached
// the upstream with each request's token read from the journal, and the rules taken away again.
import { operation } from '../../contract/operations.js';
import type { EntryJson } from '../../domain/journal/journal.js';
import { send, type OutgoingRequest, type Target } from '../conformance/http.js';
import type { Exchange } from '../../verdict/types.js';
import { TEXT_FIELDS, type Probe, type ProbeRequest } from './cases.js';
import { AdminError, type JournalWatch, type Upstream } from './upstream.js';

/** One request of a probe as it went: sent, answered (or not) at the client, and seen (or not) at the upstream. */
export interface Sent {
  readonly request: ProbeRequest;
  /** The epoch ms just before it left: the client's times are from here, the upstream's journal is on the same clock. */
  readonly sentAt: number;
  readonly ex: Exchange;
  /** How long the runner waited for it at most. */
  readonly waitMs: number;
  /** The runner's wait ran out before the answer (or, for a stream, its end) came. */
  readonly waitedOut: boolean;
  /** What reached the upstream with the request's token, oldest first. */
  readonly upstream: readonly EntryJson[];
  /** How many requests the upstream matched to the request's fault rule (in-flight ones too), when it had one. */
  readonly matched?: number;
}

/** A probe as it went. `problem`: why the upstream could not be set up for it (its cases are then inconclusive). */
export interface Observation {
  readonly key: string;
  readonly sent: readonly Sent[];
  readonly problem?: string;
}

/** What a probe needs besides its gateway. */
export interface ProbeSettings {
  readonly upstream: Upstream;
  readonly journal: JournalWatch;
  /** How long the runner waits for a request to a hung upstream: the gateway's timeout and its grace. */
  readonly hangWaitMs: number;
}

/** The rule id of a token's fault. */
const ruleId = (token: string) => `uam-gw-${token}`;

/** A request with its token made another (a probe sent again to the baseline: its upstream entries kept apart). */
export function retoken(r: ProbeRequest, suffix: string): ProbeRequest {
  if (!suffix) return r;
  const token = `${r.token}${suffix}`;
  const swap = (text: string) => text.split(`${r.token} `).join(`${token} `);
  return { ...r, token, text: swap(r.text), body: JSON.parse(swap(JSON.stringify(r.body))) as Record<string, unknown> };
}

/** The outgoing request the runner sends for a probe's request (at the document's path: --route applies in send). */
export const outgoing = (r: ProbeRequest): OutgoingRequest => ({
  method: 'POST',
  path: operation(r.operation).path,
  auth: 'valid',
  headers: {},
  body: r.body,
  streamed: r.streamed,
});

// The journal's longest wait for a hung request's entry: it is recorded only once the gateway lets go of it.
const HUNG_JOURNAL_MS = 300;

/** How long past the runner's wait a hung upstream holds its answer, so that only the gateway can end the wait. */
export const HANG_MARGIN_MS = 5_000;

/**
 * Runs a probe through `target`: each request's fault rule added (a hung upstream's delay past the runner's wait, or
 * as long as the mock allows: its timeouts.stallMaxMs), the requests sent together, the rules' matches and the journal
 * read, the rules removed whatever happened.
 */
export async function runProbe(probe: Probe, target: Target, s: ProbeSettings, suffix = ''): Promise<Observation> {
  const requests = probe.requests.map((r) => retoken(r, suffix));
  const added: string[] = [];
  let problem: string | undefined;
  try {
    for (const r of requests) {
      if (!r.fault) continue;
      const fault = r.hangs && r.fault.delayMs !== undefined ? { delayMs: s.hangWaitMs + HANG_MARGIN_MS } : r.fault;
      const rule = {
        id: ruleId(r.token),
        match: { body: { [TEXT_FIELDS[r.operation]!]: r.text } },
        fault,
        ...(r.times ? { times: r.times } : {}),
      };
      try {
        await s.upstream.addRule(rule);
      } catch (err) {
        // A mock whose stall maximum is shorter takes the longest delay it allows, if that still outlasts the wait.
        const most = Number(/maximum of (\d+) ms/.exec((err as Error).message)?.[1]);
        if (!(err instanceof AdminError) || fault.delayMs === undefined || !(most > s.hangWaitMs)) throw err;
        await s.upstream.addRule({ ...rule, fault: { delayMs: most } });
      }
      added.push(rule.id);
    }
  } catch (err) {
    problem = `the upstream did not take the probe's fault rule: ${(err as Error).message}`;
  }
  try {
    if (problem) return { key: probe.key, sent: [], problem };
    const sent = await Promise.all(
      requests.map(async (r) => {
        const waitMs = r.hangs ? s.hangWaitMs : target.timeoutMs;
        const sentAt = Date.now();
        const ex = await send({ ...target, timeoutMs: waitMs }, outgoing(r));
        // The runner's own deadline ended it: no answer, or a body still coming.
        const waitedOut = ex.incomplete?.cause === 'timeout' || (ex.error !== undefined && ex.ms >= waitMs - 1);
        return { request: r, sentAt, ex, waitMs, waitedOut };
      }),
    );
    const matched = added.length ? await ruleMatches(s.upstream) : new Map<string, number>();
    return {
      key: probe.key,
      sent: await Promise.all(
        sent.map(async (x) => ({
          ...x,
          upstream: await s.journal.entries(x.request.token, {
            // A rule counts the requests it matched, but not those after its `times` ran out.
            ...(matched.has(ruleId(x.request.token)) && !x.request.times
              ? { expected: matched.get(ruleId(x.request.token))! }
              : {}),
            ...(x.request.hangs ? { maxMs: HUNG_JOURNAL_MS } : {}),
          }),
          ...(matched.has(ruleId(x.request.token)) ? { matched: matched.get(ruleId(x.request.token))! } : {}),
        })),
      ),
    };
  } finally {
    await Promise.all(added.map((id) => s.upstream.removeRule(id).catch(() => {})));
  }
}

/** How many requests each rule matched so far, by id. */
async function ruleMatches(upstream: Upstream): Promise<Map<string, number>> {
  try {
    return new Map((await upstream.rules()).map((r) => [r.id, r.state.matched]));
  } catch {
    return new Map();
  }
}
