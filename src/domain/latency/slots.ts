// Each model's slots on this instance: how many of its requests run, and the requests waiting for one in
// arrival order. A profile's maxRunning caps the running ones, its maxWaiting the queue; past both, a request
// is refused at once (never left hanging).
import type { ModelLoad, Profile } from './types.js';

/** A slot held: given back once (later calls do nothing), which starts the next waiter if there is one. */
export interface Slot {
  release(): void;
}

/** The queue is full: the request is refused. */
export const FULL = Symbol('full');

/**
 * What asking for a slot gives: a slot now, a wait for one (it resolves with the slot, or with undefined when
 * `signal` aborts first: the client left, and its place in the queue is given up), or FULL.
 */
export type Acquired = Slot | Promise<Slot | undefined> | typeof FULL;

/** The cap a profile sets (absent: no cap, every request runs at once and is still counted). */
export type Cap = Pick<Profile, 'maxRunning' | 'maxWaiting'>;

/** A request waiting for a slot of its model. */
interface Waiter {
  readonly grant: (slot: Slot | undefined) => void;
}

/** One model's requests: those running and those waiting, first come first served. */
class Lane {
  running = 0;
  readonly waiting: Waiter[] = [];
}

/**
 * How much slower a model answers with `running` requests running (this one included), as llm-d's simulator
 * scales it: 1 + (loadFactor - 1)(running - 1)/(maxRunning - 1), so 1 alone and `loadFactor` at the cap. Without
 * a cap (or a cap of one) there is no slowdown.
 */
export function loadFactor(profile: Pick<Profile, 'loadFactor' | 'maxRunning'>, running: number): number {
  const f = profile.loadFactor ?? 1;
  const cap = profile.maxRunning;
  if (f === 1 || cap === undefined || cap <= 1) return 1;
  const busy = Math.min(Math.max(running, 1), cap);
  return 1 + ((f - 1) * (busy - 1)) / (cap - 1);
}

/** The models' slots of one instance; also the load /metrics and the inspector read. */
export class Slots implements ModelLoad {
  private readonly lanes = new Map<string, Lane>();

  running(model: string): number {
    return this.lanes.get(model)?.running ?? 0;
  }

  waiting(model: string): number {
    return this.lanes.get(model)?.waiting.length ?? 0;
  }

  models(): Iterable<string> {
    return this.lanes.keys();
  }

  /**
   * A slot of `model` under `cap`: at once while fewer than maxRunning run and none waits, else a place in the
   * queue while fewer than maxWaiting wait, else FULL. `signal` is the client leaving: a waiter whose signal
   * aborts leaves the queue and gets undefined. `model` must be a catalogue id (the lanes are kept for good, one
   * per model).
   */
  acquire(model: string, cap: Cap, signal?: AbortSignal): Acquired {
    let lane = this.lanes.get(model);
    if (!lane) this.lanes.set(model, (lane = new Lane()));
    const max = cap.maxRunning ?? Number.POSITIVE_INFINITY;
    // A cap raised at run time (the admin API) lets the waiters in first, in order: no newcomer passes them.
    while (lane.running < max && lane.waiting.length > 0) {
      lane.running++;
      lane.waiting.shift()!.grant(this.slot(lane));
    }
    if (lane.running < max) {
      lane.running++;
      return this.slot(lane);
    }
    if (lane.waiting.length >= (cap.maxWaiting ?? 0)) return FULL;
    if (signal?.aborted) return Promise.resolve(undefined);
    const queue = lane.waiting;
    return new Promise<Slot | undefined>((resolve) => {
      const leave = () => {
        const at = queue.indexOf(waiter);
        if (at >= 0) queue.splice(at, 1);
        resolve(undefined);
      };
      const waiter: Waiter = {
        grant: (slot) => {
          signal?.removeEventListener('abort', leave);
          resolve(slot);
        },
      };
      queue.push(waiter);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }

  /** A slot of `lane` (its running count already taken): giving it back hands it to the first waiter, if any. */
  private slot(lane: Lane): Slot {
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        const next = lane.waiting.shift();
        // The slot passes to the next waiter as it is freed: the running count does not dip, so no newcomer
        // can take it in between and jump the queue.
        if (next) next.grant(this.slot(lane));
        else lane.running--;
      },
    };
  }
}
