// What the proxy's modules share: the upstream and its helpers, and one exchange in flight.
import type { Context } from 'koa';
import type { Operation } from '../contract/operations.js';
import type { SchemaRegistry } from '../contract/schemas.js';
import type { Config } from '../domain/config.js';
import type { Services } from '../domain/services.js';
import type { StreamTimers } from '../pipeline/pacer.js';
import type { RequestEnd } from '../pipeline/requestEnd.js';
import type { RequestState } from '../pipeline/steps.js';
import type { Judge } from './judge.js';
import type { Recorder } from './recorder.js';
import type { Judged } from './validation.js';

/** What every exchange the proxy forwards works with. */
export interface Upstream {
  /** The upstream's base URL, with no trailing slash. */
  readonly base: string;
  readonly config: Config;
  readonly services: Services;
  readonly schemas: SchemaRegistry;
  /** The server's timers, which a stall of a faulted stream waits on. */
  readonly timers: StreamTimers;
  /** Takes every secret of the configuration out of a text (not JSON-escaped). */
  readonly scrub: (text: string) => string;
  readonly judge: Judge;
  /** With `record`: writes each exchange as a cassette. */
  readonly recorder: Recorder | undefined;
}

/** One exchange whose head the upstream has answered. */
export interface InFlight {
  readonly ctx: Context;
  readonly state: RequestState;
  readonly op: Operation;
  readonly judged: Judged;
  readonly end: RequestEnd;
  /** When the request reached the relay, and when the upstream's head came (performance.now()). */
  readonly started: number;
  readonly head: number;
  readonly res: Response;
  /** The upstream's response headers, as they came. */
  readonly headers: Record<string, string>;
  /** Stops listening for the client leaving (which aborts the upstream call). */
  readonly unwatch: () => void;
}
