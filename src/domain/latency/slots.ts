// Each model's slots on this instance: how many of its requests run, and the requests waiting for one in
// arrival order. A profile's maxRunning caps the running ones, its maxWaiting the queue; past both, a request
// is refused at once (never left hanging).
import type { ModelLoad, Profile } from './types.js';

/** A slot held: given back once (later calls do nothing), which starts the next waiter if the cap has room. */
export interface Slot {
  release(): void;
}

/** The queue is full: the request is refused. */
export const FULL = Symbol('full');

/**
 * What asking for a slot gives: a slot now, a wait for one (it resolves with the slot, or with undefined when
 * `signal` aborts first: the client left, and its place in the queue is given up), or FULL.
 */
type Acquired = Slot | Promise<Slot | undefined> | typeof FULL;

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

/**
 * The models' slots of one instance; also the load /metrics and the inspector read. Each model's cap is its own
 * profile's (`capOf`, read whenever a slot is asked for or given back): what a request asks for its own timing never
 * enters, so no request can lift the cap of the model it runs in.
 */
export class Slots implements ModelLoad {
  private readonly lanes = new Map<string, Lane>();

  constructor(
    /** The cap of a model's lane: the profile the model has without any request's choice (undefined: none). */
    private readonly capOf: (model: string) => Cap | undefined = () => undefined,
  ) {}

  running(model: string): number {
    return this.lanes.get(model)?.running ?? 0;
  }

  waiting(model: string): number {
    return this.lanes.get(model)?.waiting.length ?? 0;
  }

  models(): Iterable<string> {
    return this.lanes.keys();
  }

  /** The cap in force for `model` now. */
  cap(model: string): Cap {
    return this.capOf(model) ?? {};
  }

  /**
   * A slot of `model` under its cap: at once while fewer than maxRunning run and none waits, else a place in the
   * queue while fewer than maxWaiting wait, else FULL. `signal` is the client leaving: a waiter whose signal aborts
   * leaves the queue and gets undefined. `model` must be a catalogue id (the lanes are kept for good, one per model).
   */
  acquire(model: string, signal?: AbortSignal): Acquired {
    let lane = this.lanes.get(model);
    if (!lane) this.lanes.set(model, (lane = new Lane()));
    const cap = this.cap(model);
    // A cap raised at run time (the admin API) lets the waiters in first, in order: no newcomer passes them.
    this.letIn(model, lane, cap);
    if (lane.running < (cap.maxRunning ?? Number.POSITIVE_INFINITY)) {
      lane.running++;
      return this.slot(model, lane);
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

  /** Lets in the waiters the caps in force now make room for (after the admin API changed a model's profile). */
  settle(): void {
    for (const [model, lane] of this.lanes) this.letIn(model, lane, this.cap(model));
  }

  /** Grants the first waiters of `lane` a slot while the cap has room, in order. */
  private letIn(model: string, lane: Lane, cap: Cap): void {
    const max = cap.maxRunning ?? Number.POSITIVE_INFINITY;
    while (lane.running < max && lane.waiting.length > 0) {
      lane.running++;
      lane.waiting.shift()!.grant(this.slot(model, lane));
    }
  }

  /** A slot of `lane` (its running count already taken): given back, it lets the next waiter in if the cap has room. */
  private slot(model: string, lane: Lane): Slot {
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        // The waiters get the room at once, in the same turn: no newcomer can take it in between and jump the queue.
        // A cap lowered at run time (the admin API) is kept to: the room is given only while the running are fewer.
        lane.running--;
        this.letIn(model, lane, this.cap(model));
      },
    };
  }
}
