// What a handler answers: the shape the pipeline writes and faults may alter.

/**
 * Makes a JSON answer's text again, byte for byte, from the few values it was made of. The journal holds
 * it instead of the text of a short answer: the text lives only until it is written, and what an unread
 * entry keeps is a small object rather than the text (which, held for the life of a journal entry, the
 * garbage collector would copy out of the young generation for every request).
 */
export interface TextRecipe {
  make(): string;
}

/** Whether a recorded response body is a recipe (not a text or a Buffer). */
export const isRecipe = (body: unknown): body is TextRecipe =>
  typeof body === 'object' && body !== null && typeof (body as Partial<TextRecipe>).make === 'function';

/** One SSE event of a streamed reply: its JSON text and how many tokens it carries (for pacing). */
export interface SseEvent {
  readonly data: string;
  readonly tokens: number;
}

/**
 * The events of a streamed reply, read one at a time: a chat reply makes each event's text as it is written
 * (text/wire.ts), so a thousand open streams of a thousand tokens hold no million strings while they wait.
 */
export interface SseEvents {
  readonly length: number;
  /** The data of event `i` (0 to length - 1). */
  data(i: number): string;
  /** How many characters `data(i)` has, without making it (what a stream's log counts of the events it keeps). */
  chars(i: number): number;
  /** The tokens event `i` carries: what pacing waits for. */
  tokens(i: number): number;
  /**
   * Event `i` as written (`data: `, its data and the blank line), as pieces of bytes put into `into`: the writer
   * copies the pieces of every event it writes at once into one buffer.
   */
  frame(i: number, into: FrameSink): void;
}

/** Where an event's pieces of bytes go (the stream writer's chunk being made). */
export interface FrameSink {
  put(bytes: Buffer): void;
}

/** An event's bytes on the wire. */
export const frameOf = (data: string): Buffer => Buffer.from(`data: ${data}\n\n`);

/** Events held as a list (a replayed recording, a test's). */
export class EventList implements SseEvents {
  constructor(readonly list: readonly SseEvent[]) {}
  get length(): number {
    return this.list.length;
  }
  data(i: number): string {
    return this.list[i]!.data;
  }
  chars(i: number): number {
    return this.list[i]!.data.length;
  }
  tokens(i: number): number {
    return this.list[i]!.tokens;
  }
  frame(i: number, into: FrameSink): void {
    into.put(frameOf(this.list[i]!.data));
  }
}

/** The events as a list, for reading them all at once. */
export const eventsOf = (events: SseEvents): SseEvent[] =>
  Array.from({ length: events.length }, (_, i) => ({ data: events.data(i), tokens: events.tokens(i) }));

/** A chat answer's tokens, as its usage counts them: for the journal and /metrics. */
export interface Usage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

/** What a handler answers; the respond middleware writes it, the faults middleware may alter it first. */
export type Reply =
  | {
      kind: 'json';
      status?: number;
      /** A value to serialise, or JSON text written as it is. */
      body: unknown;
      headers?: Record<string, string>;
      /** Tokens the answer used (chat), for the tokens-per-minute limit. */
      tokens?: number;
      /** Makes `body` (a text) again; whoever replaces `body` drops it. */
      recipe?: TextRecipe;
      usage?: Usage;
    }
  | {
      kind: 'binary';
      contentType: string;
      body: Buffer;
      headers?: Record<string, string>;
      /** The status when it is not 200 (a relayed or replayed answer, which may be an error). */
      status?: number;
    }
  | {
      kind: 'sse';
      events: SseEvents;
      /**
       * How the stream ends: `done` writes `data: [DONE]`; `cut` drops the connection after `stopAfter`
       * events (the stream-cut fault); `stall` sends `stopAfter` events, then nothing until the client
       * gives up or the server's stall maximum passes.
       */
      ending: 'done' | 'cut' | 'stall';
      stopAfter?: number;
      /** Replace the JSON of this event with a broken one (the malformed fault). */
      malformedAt?: number;
      pacing: {
        timeToFirstTokenMs: number;
        tokensPerSecond: number;
        /**
         * A latency profile's gaps: the wait before an event of `tokens` tokens, in ms, drawn as it is due (one draw
         * per token, slowed by the model's load then). When given, it replaces `tokensPerSecond`.
         */
        gap?: (tokens: number) => number;
      };
      /**
       * Replayed streams: when each event is due, in ms from the first (one more entry for the end);
       * when given, it replaces the per-token pacing after the time to first token.
       */
      schedule?: readonly number[];
      headers?: Record<string, string>;
      usage?: Usage;
    }
  | {
      /**
       * A live text/event-stream that stays open (the inspector's journal feed): `open` starts sending
       * through `send` and returns the function that stops it, called once the client is gone.
       */
      kind: 'feed';
      open(send: (event: string, data: string) => void): () => void;
      /** How often an idle feed writes a comment line, so proxies and the browser see it is alive (feeds.heartbeatMs). */
      heartbeatMs: number;
      headers?: Record<string, string>;
    };
