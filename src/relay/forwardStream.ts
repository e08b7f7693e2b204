// A streamed answer from the upstream: passed on as it arrives (the head at once, each read as it comes), a stream
// fault applied as the mock applies it to its own, then judged whole and recorded with each event's time.
import type { Violation } from '../domain/journal/journal.js';
import { openHead } from '../pipeline/requestContext.js';
import { STOP, type StepResult } from '../pipeline/steps.js';
import { endEarly } from '../pipeline/transport.js';
import { parseSse } from '../verdict/sse.js';
import type { RecordedEvent } from './cassette.js';
import type { InFlight, Upstream } from './upstream.js';
import { relayHeaders } from './headers.js';
import { RelayedStreamFault } from './streamFault.js';
import { responseViolations, violationsHeader } from './validation.js';

/** What the relay keeps of the upstream's stream as it goes through, for the judge and the cassette. */
class StreamCopy {
  readonly chunks: Buffer[] = [];
  readonly reads: number[] = [];
  readonly events: RecordedEvent[] = [];
  private readonly decoder = new TextDecoder();
  private text = '';

  /** Keeps one read that came `t` ms after the head; returns the blocks (events, comments) it completed. */
  add(bytes: Buffer, t: number): string[] {
    this.chunks.push(bytes);
    this.reads.push(bytes.length);
    this.text += this.decoder.decode(bytes, { stream: true }).replace(/\r\n?/g, '\n');
    const blocks: string[] = [];
    for (let cut = this.text.indexOf('\n\n'); cut >= 0; cut = this.text.indexOf('\n\n')) {
      const block = this.text.slice(0, cut + 2);
      for (const e of parseSse(block).events) this.events.push({ t, data: e.data });
      this.text = this.text.slice(cut + 2);
      blocks.push(block);
    }
    return blocks;
  }
}

/** Passes the upstream's stream on; its departures go in the head's header and, once it is over, to the judge. */
export async function forwardStream(up: Upstream, f: InFlight): Promise<StepResult> {
  const { res, state } = f;
  const headOnly = { status: res.status, headers: f.headers, body: Buffer.alloc(0), ms: 0 };
  const headFound = await responseViolations(f.judged, headOnly, 'documented', up.schemas);
  // A stream fault (stream-cut, stall, malformed) applies to a successful stream as the mock applies
  // it to its own: the events then go out a block at a time, as each completes.
  const fault = res.status >= 200 && res.status < 300 ? RelayedStreamFault.of(state.faultSpec) : undefined;
  const answerHeaders = relayHeaders(f.headers, up.scrub);
  writeHead(f, answerHeaders, up.judge.departures(f.judged, headFound));
  const copy = new StreamCopy();
  const read = await relayEvents(up, f, copy, fault);
  f.unwatch();
  const endMs = Math.round(performance.now() - f.head);
  // A stream that a fault ended, or that the client left, is judged by its head: the rest of the
  // upstream's answer was never read, and is not the upstream's departure.
  const faultEnded = fault?.over === true && copy.events.at(-1)?.data !== '[DONE]';
  const partial = faultEnded || state.stream === 'aborted';
  // As the runner counts it: from the request, so a stream held back whole shows its wait.
  const whole = {
    ...headOnly,
    body: Buffer.concat(copy.chunks),
    reads: copy.reads,
    ms: Math.round(performance.now() - f.started),
  };
  const found = partial
    ? headFound
    : await responseViolations(f.judged, whole, up.config.validationProfile, up.schemas);
  up.judge.judge(state, f.judged, res.status, found, performance.now() - f.started);
  // The cassette holds the upstream's whole answer as it came, whatever a fault made of it for the client.
  if (read && !partial)
    up.recorder?.record(state, f.op, f.ctx, {
      status: res.status,
      headers: answerHeaders,
      events: copy.events,
      endMs,
    });
  return STOP;
}

/** The head goes out at once, with the departures the head already shows. */
function writeHead(f: InFlight, answerHeaders: Record<string, string>, early: readonly Violation[]): void {
  const { ctx, state, res } = f;
  const out = ctx.res;
  openHead(out, state);
  ctx.respond = false;
  ctx.status = res.status;
  out.writeHead(res.status, {
    ...(out.getHeaders() as Record<string, string>),
    ...answerHeaders,
    ...(early.length ? { 'x-mock-violations': violationsHeader(early) } : {}),
  });
  out.flushHeaders();
}

/**
 * Copies the upstream's stream to the client, through the fault if there is one, and ends it; sets how it ended.
 * False when reading the upstream's stream failed (it broke off, or the client left and the read was aborted).
 */
async function relayEvents(
  up: Upstream,
  f: InFlight,
  copy: StreamCopy,
  fault: RelayedStreamFault | undefined,
): Promise<boolean> {
  const { state, res } = f;
  const out = f.ctx.res;
  try {
    // A cut or stall after no event at all comes at once, without waiting for the upstream's first.
    if (fault?.over) await res.body?.cancel().catch(() => undefined);
    else
      for await (const chunk of res.body ?? []) {
        const bytes = Buffer.from(chunk as Uint8Array);
        if (!fault && !out.destroyed) out.write(bytes);
        for (const block of copy.add(bytes, Math.round(performance.now() - f.head))) {
          const sent = fault?.take(block);
          if (sent && !out.destroyed) out.write(sent);
        }
        // The client gets nothing more: the upstream's answer is not read further.
        if (fault?.over) break;
      }
  } catch {
    state.stream = out.destroyed ? 'aborted' : 'cut';
    out.destroy();
    return false;
  }
  if (fault?.ending)
    state.stream = await endEarly(out, f.end, fault.end(), fault.ending, up.config.timeouts.stallMaxMs, up.timers);
  else {
    state.stream = 'completed';
    out.end(fault?.end() ?? '');
  }
  return true;
}
