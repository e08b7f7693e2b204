// Recording: each relayed exchange written as a cassette (docs/record-replay.md), in the background.
import type { Context } from 'koa';
import type { Operation } from '../contract/operations.js';
import type { ErrorSink } from '../pipeline/errors.js';
import type { RequestState } from '../pipeline/steps.js';
import { CASSETTE_VERSION, CassetteStore, normaliseRequest, requestHash, type Cassette } from './cassette.js';

/** A cassette's answer, or the work that makes it (a body is stored beside the cassette first). */
export type Recorded = Cassette['response'] | (() => Promise<Cassette['response']>);

/** Writes cassettes in the background; a failure is logged and counted, and `settle` waits for every write. */
export class Recorder {
  recorded = 0;
  failures = 0;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    readonly store: CassetteStore,
    /** The upstream the answers come from, named in each cassette. */
    private readonly upstream: string,
    /** Takes every secret of the configuration out of a cassette's text. */
    private readonly scrub: (text: string) => string,
    private readonly report: ErrorSink,
  ) {}

  /** Records the answer to the request of `ctx`. */
  record(state: RequestState, op: Operation, ctx: Context, response: Recorded): void {
    const request = normaliseRequest(op, ctx.method, ctx.req.url ?? ctx.url, ctx.req.headers, state.body);
    const hash = requestHash(request);
    const write = (async () => {
      const res = typeof response === 'function' ? await response() : response;
      const cassette: Cassette = {
        version: CASSETTE_VERSION,
        hash,
        operation: op.id,
        request,
        upstream: this.upstream,
        recordedAt: new Date().toISOString(),
        response: res,
      };
      await this.store.write(op.id, hash, this.scrub(JSON.stringify(cassette, null, 2)));
      this.recorded++;
    })().catch((err: unknown) => {
      this.failures++;
      this.report(
        new Error(`could not write the cassette of ${op.id} ${hash} to ${this.store.dir}: ${(err as Error).message}`),
        { method: ctx.method, url: ctx.path, requestId: state.requestId },
      );
    });
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
  }

  /** Resolves once every write started has ended, those started meanwhile included. */
  async settle(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }
}
