import type { Context } from 'koa';
import { ApiError, ERRORS } from '../contract/errors.js';
import type { Reply } from '../contract/reply.js';
import { FULL, loadFactor, type Cap, type Slot } from '../domain/latency/slots.js';
import type { Dist, Draws, Profile } from '../domain/latency/types.js';
import type { Services } from '../domain/services.js';
import type { PacingRequest } from '../text/pacing.js';
import { waitOrLeave } from './faults.js';
import { endOf } from './requestEnd.js';
import { STOP, type RequestState, type Step, type StepResult } from './steps.js';

type SseReply = Extract<Reply, { kind: 'sse' }>;

/** The refusal of a request whose model has every slot running and its queue full. */
function overloaded(services: Services, model: string, cap: Cap): ApiError {
  const { queueFullStatus, retryAfterMs } = services.latency.view();
  const seconds = Math.ceil(retryAfterMs / 1000);
  return new ApiError(ERRORS.MODEL_OVERLOADED, {
    status: queueFullStatus,
    message: `The model '${model}' is at capacity (${cap.maxRunning ?? 0} running, ${cap.maxWaiting ?? 0} waiting); retry after ${seconds} s.`,
    headers: { 'retry-after': String(seconds), 'retry-after-ms': String(retryAfterMs) },
  });
}

/** The client left before the answer was written: nothing more is sent, and the record says so. */
function leftEarly(state: RequestState): typeof STOP {
  state.reply = undefined;
  state.transportStatus = 0;
  state.stream = 'aborted';
  return STOP;
}

/** Gives `slot` back when the request is over (endRequest: a stream's after its end), with what else it holds. */
function hold(state: RequestState, slot: Slot): void {
  const before = state.release;
  state.release = before
    ? () => {
        before();
        slot.release();
      }
    : () => slot.release();
}

/**
 * The timing of one admitted request: its draws, in order, from the request's profile (`profile`: the header's
 * choice, else the model's), each slowed by the model's load when drawn (`lane`: the model's own profile, whose
 * cap and load factor say how the model slows, whatever a request chose for its own timing).
 */
class Timing {
  constructor(
    private readonly services: Services,
    private readonly model: string,
    readonly profile: Profile,
    private readonly lane: Profile | undefined,
    private readonly draws: Draws,
  ) {}

  /** How much slower the model answers now. */
  factor(): number {
    return this.lane ? loadFactor(this.lane, this.services.load.running(this.model)) : 1;
  }

  /** The time to first token: the drawn ttft and the prompt's prefill, slowed by the load at admission. */
  firstToken(ttft: Dist, promptTokens: number): number {
    return (this.draws.draw(ttft) + (this.profile.prefillMsPerToken ?? 0) * promptTokens) * this.factor();
  }

  /** The wait for `tokens` tokens: one draw per token, slowed by the load now. */
  gaps(gap: Dist, tokens: number): number {
    let ms = 0;
    for (let i = 0; i < tokens; i++) ms += this.draws.draw(gap);
    return ms * this.factor();
  }

  /** A media answer's whole time. */
  duration(): number {
    return this.draws.draw(this.profile.duration ?? 0) * this.factor();
  }
}

/** The gap between tokens: the header's tps as a fixed gap, else the profile's; undefined: the reply's own pacing. */
function gapOf(profile: Profile, asked: PacingRequest | undefined): Dist | undefined {
  if (asked?.tps !== undefined) return asked.tps > 0 ? 1000 / asked.tps : 0;
  return profile.interToken;
}

/**
 * Admission under a latency profile, after the handler has answered (refusals and errors never take a slot):
 * the request's model (the body field its operation's `latency` row names) gets its profile; with a cap the
 * request takes a slot, waits for one in order, or is refused (429, or 503 per queueFullStatus, with
 * retry-after); then its answer is timed: a stream's time to first token from the slot and a gap drawn per
 * token, a plain chat answer waits the same in full, media wait their duration (a plain answer at most
 * timeouts.answerMaxMs). The cap, the queue and the slowdown are the model's own profile's, whatever profile times
 * the request. The slot is given back when the request is over (endRequest). Without a profile nothing changes.
 * Relayed and replayed answers keep their recorded timing: with a relay this step is not in the pipeline. `clock` is
 * the stream timers' (a stream's ttft runs on it).
 */
export function admit(services: Services, clock: { now(): number }): Step {
  return function admit(ctx, state) {
    const op = state.operation!;
    const latency = op.latency;
    const reply = state.reply;
    if (!latency || !reply || reply.kind === 'feed') return;
    // What the plan decided: the model (only catalogue models take slots: an SSML voice the field does not name does
    // not), what times the request (none: it answers at once) and the model's own profile, which holds its lane.
    const { model: named, pacing: asked, timing: choice, lane } = state.plan ?? {};
    if (!named || (!choice && !lane)) return;
    const model = named.id;
    if (choice) state.profile = choice.name;
    if (latency.timing === 'task') return; // the video handler timed the task itself
    const cap = services.load.cap(model);
    const end = endOf(state, ctx.res);
    if (end.closed) return leftEarly(state);
    let leaving: AbortController | undefined;
    const gone = () => leaving!.abort();
    if (cap.maxRunning !== undefined) {
      leaving = new AbortController();
      end.onClose(gone);
    }
    const got = services.load.acquire(model, leaving?.signal);
    if (got === FULL) {
      end.offClose(gone);
      return overloaded(services, model, cap);
    }
    const run = (slot: Slot | undefined): StepResult | Promise<StepResult> => {
      end.offClose(gone);
      if (!slot) return leftEarly(state);
      hold(state, slot);
      if (end.closed) return leftEarly(state);
      if (!choice) return; // answered at once (a stream paced as the server and the header say), holding its slot
      const timing = new Timing(services, model, choice.profile, lane?.profile, services.latency.draws());
      return timed(ctx, state, services, timing, asked, clock);
    };
    if (!(got instanceof Promise)) {
      state.queuedMs = 0;
      return run(got);
    }
    const start = clock.now();
    return got.then((slot) => {
      state.queuedMs = clock.now() - start;
      return run(slot);
    });
  };
}

/** The admitted request's answer timed: a stream paced, any other answer held for its time. */
function timed(
  ctx: Context,
  state: RequestState,
  services: Services,
  timing: Timing,
  asked: PacingRequest | undefined,
  clock: { now(): number },
): StepResult | Promise<StepResult> {
  const reply = state.reply!;
  const profile = timing.profile;
  if (reply.kind === 'sse') {
    state.reply = paced(reply, timing, profile, asked, services.config.timeouts.streamMaxMs);
    state.arrived = clock.now(); // the time to first token runs from the slot, the queue's wait before it
    return;
  }
  let ms: number;
  if (state.operation!.latency!.timing === 'tokens') {
    const usage = reply.kind === 'json' ? reply.usage : undefined;
    const gap = gapOf(profile, asked);
    ms = timing.firstToken(asked?.ttft ?? profile.ttft ?? 0, usage?.promptTokens ?? 0);
    if (gap !== undefined) ms += timing.gaps(gap, usage?.completionTokens ?? 0);
  } else ms = timing.duration();
  if (!(ms > 0)) return;
  // A plain answer is held at most its time limit: a longer draw (an hour a token, say) is cut to it, never passed to
  // a timer that would overflow and fire at once.
  ms = Math.min(ms, services.config.timeouts.answerMaxMs);
  return waitOrLeave(endOf(state, ctx.res), services, ms).then((left) => (left ? leftEarly(state) : undefined));
}

/** A stream's pacing under a profile: the header's ttft and tps replace the profile's ttft and gaps. */
function paced(
  reply: SseReply,
  timing: Timing,
  profile: Profile,
  asked: PacingRequest | undefined,
  streamMaxMs: number,
): SseReply {
  const ttft = asked?.ttft ?? profile.ttft ?? reply.pacing.timeToFirstTokenMs;
  const first = Math.min(timing.firstToken(ttft, reply.usage?.promptTokens ?? 0), streamMaxMs);
  const gap = gapOf(profile, asked);
  return {
    ...reply,
    pacing: {
      ...reply.pacing,
      timeToFirstTokenMs: first,
      ...(gap === undefined ? {} : { gap: (tokens: number) => timing.gaps(gap, tokens) }),
    },
  };
}
