/** One server-sent event: its data lines joined, and its other fields. */
export interface SseEvent {
  readonly data: string;
  readonly event?: string;
}

/**
 * Splits an event stream into events (WHATWG rules: blank-line separated, `data:` lines joined, `:` comments skipped).
 */
export function parseSse(text: string): { events: SseEvent[]; trailing: string } {
  const blocks = text.replace(/\r\n?/g, '\n').split('\n\n');
  const trailing = blocks.pop() ?? '';
  const events: SseEvent[] = [];
  for (const block of blocks) {
    const data: string[] = [];
    let event: string | undefined;
    for (const line of block.split('\n')) {
      if (!line || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
    }
    if (data.length) events.push({ data: data.join('\n'), ...(event !== undefined ? { event } : {}) });
  }
  return { events, trailing };
}

interface Chunk {
  id?: unknown;
  object?: unknown;
  choices?: { delta?: { role?: unknown; content?: unknown }; finish_reason?: unknown }[];
}

/**
 * How long a stream must take, from the request to its last byte, before its delivery in one read
 * counts as buffering: a tenth of a second, about the least delay a person notices. A stream that
 * arrives whole sooner (a fast upstream: the mock unpaced, a cache) cannot be told from a buffered one
 * from the outside, and no client waits on it; a buffered stream in front of a model that takes time per
 * token arrives whole after that time, and fails.
 */
export const BUFFERING_SHOWS_AFTER_MS = 100;

/**
 * How many chunks with content a stream must carry before its delivery is judged. A model makes a short
 * reply at once: a one-token reply's role, token and finish chunks leave together at the first token,
 * buffered or not, and arrive in one read from a correct service. Four tokens take a model several
 * steps, long enough apart to arrive in reads of their own when nothing holds them back.
 */
export const BUFFERING_SHOWS_AFTER_CHUNKS = 4;

/**
 * The chat stream grammar: every event a chat.completion.chunk with one id, the first carrying the
 * role, exactly one finish_reason, exactly one `data: [DONE]` as the last event with nothing after
 * it, and, for a stream that took at least BUFFERING_SHOWS_AFTER_MS (`ms`, from the request to its
 * end) and carried at least BUFFERING_SHOWS_AFTER_CHUNKS chunks with content, delivery in more than
 * one read with the first event before the end. Returns the problems.
 */
export function checkChatStream(
  body: Buffer,
  reads: readonly number[] | undefined,
  ms: number,
  validChunk: (chunk: unknown) => string | undefined,
): string[] {
  const problems: string[] = [];
  const text = body.toString('utf8');
  const { events, trailing } = parseSse(text);
  if (trailing.trim())
    problems.push(
      `the stream does not end with a blank line after its last event (trailing ${JSON.stringify(trailing.slice(0, 40))})`,
    );
  const done = events.filter((e) => e.data === '[DONE]').length;
  if (done !== 1) problems.push(`expected exactly one 'data: [DONE]', found ${done}`);
  else if (events[events.length - 1]!.data !== '[DONE]') problems.push("events follow 'data: [DONE]'");
  const chunks: Chunk[] = [];
  for (const e of events) {
    if (e.data === '[DONE]') continue;
    try {
      chunks.push(JSON.parse(e.data) as Chunk);
    } catch {
      problems.push(`an event is not JSON: ${JSON.stringify(e.data.slice(0, 60))}`);
    }
  }
  if (!chunks.length) problems.push('no chunk before the end of the stream');
  const schemaProblem = chunks.map(validChunk).find(Boolean);
  if (schemaProblem) problems.push(`a chunk does not match the chunk schema: ${schemaProblem}`);
  if (new Set(chunks.map((c) => c.id)).size > 1) problems.push('the chunks do not share one id');
  const withChoices = chunks.filter((c) => c.choices?.length);
  if (withChoices.length && typeof withChoices[0]!.choices![0]!.delta?.role !== 'string')
    problems.push('the first chunk does not carry the role');
  const finishes = withChoices.filter((c) =>
    c.choices!.some((ch) => ch.finish_reason !== null && ch.finish_reason !== undefined),
  ).length;
  if (finishes !== 1) problems.push(`expected exactly one chunk with a finish_reason, found ${finishes}`);
  const withContent = withChoices.filter((c) =>
    c.choices!.some((ch) => typeof ch.delta?.content === 'string' && ch.delta.content !== ''),
  ).length;
  if (reads && ms >= BUFFERING_SHOWS_AFTER_MS && withContent >= BUFFERING_SHOWS_AFTER_CHUNKS) {
    // The first event must be complete before the read that ends the stream begins.
    const firstEventEnd = body.indexOf('\n\n') + 2;
    const lastReadStart = body.length - (reads[reads.length - 1] ?? 0);
    if (reads.length < 2)
      problems.push(
        `the whole stream arrived in one read, ${Math.round(ms)} ms after the request (buffered, not incremental)`,
      );
    else if (firstEventEnd < 2 || firstEventEnd > lastReadStart)
      problems.push(
        `the first event did not arrive before the end of the stream, ${Math.round(ms)} ms after the request`,
      );
  }
  return problems;
}
