// A chat stream as the gateway profile compares it: its events with the time each reached the client (from the sizes
// and times of the reads), and what they say (the content in order, the finish_reason, the usage, an error, [DONE]).
import { parseSse } from '../../verdict/sse.js';
import type { Exchange } from '../../verdict/types.js';

/** One event: its data, and when it was read (client) or written (upstream), in ms. */
export interface TimedEvent {
  readonly data: string;
  readonly ms: number;
}

/** Where each event of a body ends: the byte just past its blank line. */
function eventEnds(body: Buffer): number[] {
  const ends: number[] = [];
  for (let i = 0; i < body.length; i++) {
    if (body[i] !== 0x0a) continue;
    if (body[i + 1] === 0x0a) ends.push(i + 2);
    else if (body[i + 1] === 0x0d && body[i + 2] === 0x0a) ends.push(i + 3);
  }
  return ends;
}

/**
 * The events of a streamed answer as the client read them, each with the time (ms from the request's start) of the
 * read that completed it. Without read times (not read as a stream), every event has the answer's time.
 */
export function clientEvents(ex: Exchange): TimedEvent[] {
  const out: TimedEvent[] = [];
  const reads = ex.reads ?? [];
  const times = ex.readMs ?? [];
  let read = 0;
  let readEnd = reads[0] ?? Number.POSITIVE_INFINITY;
  let start = 0;
  for (const end of eventEnds(ex.body)) {
    while (end > readEnd && read < reads.length - 1) readEnd += reads[++read]!;
    const ms = times[read] ?? ex.ms;
    for (const e of parseSse(ex.body.subarray(start, end).toString('utf8')).events) out.push({ data: e.data, ms });
    start = end;
  }
  return out;
}

/** What a chat stream says, read from its events' data. */
interface StreamText {
  /** The content of choice 0, in order. */
  readonly content: string;
  /** Each finish_reason, in order. */
  readonly finishes: readonly string[];
  /** The last usage a chunk carried. */
  readonly usage?: unknown;
  /** An error event's error object (a gateway, or the mock's time limit, ending a stream with an error). */
  readonly error?: unknown;
  /** The last event is data: [DONE]. */
  readonly done: boolean;
  /** How much content each event ended with: the content's length after it. */
  readonly progress: readonly number[];
}

interface Chunk {
  readonly choices?: readonly { delta?: { content?: unknown }; finish_reason?: unknown }[];
  readonly usage?: unknown;
  readonly error?: unknown;
}

export function streamText(events: readonly { readonly data: string }[]): StreamText {
  let content = '';
  const finishes: string[] = [];
  const progress: number[] = [];
  let usage: unknown;
  let error: unknown;
  for (const e of events) {
    if (e.data !== '[DONE]') {
      let chunk: Chunk | null = null;
      try {
        chunk = JSON.parse(e.data) as Chunk | null;
      } catch {
        // Not JSON: it adds nothing the comparison reads.
      }
      for (const choice of chunk?.choices ?? []) {
        if (typeof choice.delta?.content === 'string') content += choice.delta.content;
        if (typeof choice.finish_reason === 'string') finishes.push(choice.finish_reason);
      }
      if (chunk?.usage) usage = chunk.usage;
      if (chunk?.error) error = chunk.error;
    }
    progress.push(content.length);
  }
  return {
    content,
    finishes,
    ...(usage !== undefined ? { usage } : {}),
    ...(error !== undefined ? { error } : {}),
    done: events.length > 0 && events[events.length - 1]!.data === '[DONE]',
    progress,
  };
}

/** A point of a stream both ends share: the first event, each content the upstream added, the finish, [DONE]. */
export interface Milestone {
  readonly what: string;
  /** When the upstream wrote it and when the client read it, on one clock (epoch ms). */
  readonly upstream: number;
  readonly client: number;
}

/**
 * The upstream's events matched to the client's by what they carry, so that a gateway may split or join chunks: the
 * first event to the first event, each event that added content to the first client event by which the client had as
 * much, the finish_reason and [DONE] to theirs. Undefined when the client's content is not the upstream's (nothing to
 * match). Times: the upstream's events on its clock from its stream's start, the client's from its request's; `offset`
 * puts both on one clock.
 */
export function milestones(
  upstream: readonly TimedEvent[],
  client: readonly TimedEvent[],
  offset: { readonly upstream: number; readonly client: number },
): Milestone[] | undefined {
  const up = streamText(upstream);
  const down = streamText(client);
  if (!upstream.length || !client.length || up.content !== down.content) return undefined;
  const at = (events: readonly TimedEvent[], i: number, base: number) => base + events[i]!.ms;
  const out: Milestone[] = [
    { what: 'the first event', upstream: at(upstream, 0, offset.upstream), client: at(client, 0, offset.client) },
  ];
  for (let i = 1; i < upstream.length; i++) {
    const data = upstream[i]!.data;
    const grew = up.progress[i]! > up.progress[i - 1]!;
    let j = -1;
    let what = '';
    if (grew) {
      j = down.progress.findIndex((p) => p >= up.progress[i]!);
      what = `the content up to character ${up.progress[i]}`;
    } else if (data === '[DONE]') {
      j = client.findIndex((e) => e.data === '[DONE]');
      what = 'data: [DONE]';
    } else if (/"finish_reason":"/.test(data)) {
      j = client.findIndex((e) => /"finish_reason":"/.test(e.data));
      what = 'the finish_reason';
    }
    if (j >= 0) out.push({ what, upstream: at(upstream, i, offset.upstream), client: at(client, j, offset.client) });
  }
  return out;
}
