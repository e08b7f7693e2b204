// Shared by the tests of third-party clients (the Vercel AI SDK, LangChain): where they run, and waiting for the
// journal.
import { test as uvuTest } from 'uvu';
import type { JournalEntry } from '../../src/domain/journal/journal.js';
import type { MockServer } from '../../src/server/programmatic.js';
import { waitFor } from '../support/index.js';

/**
 * `ai` 7, `@ai-sdk/openai` 4, `@langchain/openai` 1.6 and the `openai` 7 under it declare
 * `engines.node >= 22`. Their tests run where the clients say they run: on Node.js 22 and later
 * (CI runs the suite on 22, 24 and 26), and are reported as skipped on Node.js 20, which reached its end of life.
 */
export const CLIENTS_SUPPORTED = Number(process.versions.node.split('.')[0]) >= 22;

/** `test` where the clients are supported, `test.skip` elsewhere (uvu counts them as skipped). */
export function clientTest(test: typeof uvuTest): typeof uvuTest | typeof uvuTest.skip {
  return CLIENTS_SUPPORTED ? test : test.skip;
}

/** A prompt whose reply is long (over a thousand chunks), so a paced stream is still going when the client aborts. */
export const LONG_PROMPT = 'Please give me a long answer about testing.';

/** A stream slow enough to abort half-way: no wait for the first token, then 20 tokens a second. */
export const PACED = { 'X-Mock-Pacing': 'ttft=0; tps=20' } as const;

/**
 * Runs `fn` with the client's own backoff waits recorded and skipped: a setTimeout called directly from a
 * file whose path matches `from` (the client's retry code) fires at once, and its delay is returned in `waits`.
 * Every other timer, the mock's included, keeps its delay. So a test checks the client's retry policy
 * (how many attempts, how long it meant to wait) without sleeping through it.
 */
export async function skippingBackoff<T>(from: RegExp, fn: () => Promise<T>): Promise<{ result: T; waits: number[] }> {
  const real = globalThis.setTimeout;
  const waits: number[] = [];
  globalThis.setTimeout = ((cb: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    // Line 0 is the message, 1 this function, 2 its caller: only the caller counts, since a request timer
    // set further down the same call chain (the HTTP client's timeout) must keep its delay.
    const caller = new Error().stack?.split('\n')[2] ?? '';
    if (!from.test(caller)) return real(cb, ms, ...args);
    waits.push(ms ?? 0);
    return real(cb, 0, ...args);
  }) as typeof setTimeout;
  try {
    return { result: await fn(), waits };
  } finally {
    globalThis.setTimeout = real;
  }
}

/**
 * The journal entry `find` picks, once it is there: a stream's entry is written when the server sees the
 * stream end, which for a client that aborts comes a moment after the client gave up.
 */
export const journalEntry = (mock: MockServer, find: (e: JournalEntry) => boolean): Promise<JournalEntry> =>
  waitFor(
    () => `such a journal entry; the journal: ${JSON.stringify(mock.requests())}`,
    () => mock.requests().find(find),
  );
