// The hostile-client battery: the built server (dist/, started as `npm start` starts it) against clients that
// pipeline and leave, never read, read a byte a second, half-close, or abort at some step of a stream, several at once,
// on a capped model and one without a cap, with and without X-Mock-Pacing profiles. After each scenario, what the
// server holds comes back to rest (GET /__admin/streams, GET /__admin/latency, /metrics), every request is recorded
// at most once, a stream a client never reads ends at the stream time limit (`timed-out`), and the capped model
// answers again.
//
// Randomised: a run prints its seed. Replay one with HOSTILE_SEED=<seed> (and HOSTILE_PATH=<path> from a failure);
// HOSTILE_RUNS sets how many scenarios (default 8): node --import tsx test/run.ts test/hostile
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { atRest, held, startBuilt, type BuiltServer, type Held } from './builtServer.js';
import { requestsOf, runClient, type Ask, type Behaviour, type Seen } from './clients.js';

// Short limits keep a scenario to a second or two: a stream a client never reads ends at STREAM_MAX_MS, and an upload
// that stops coming is answered 408 at the request time limit.
const STREAM_MAX_MS = 1000;
const CONFIG = {
  logLevel: 'silent',
  // A flood of pipelined requests does not push the other clients' records out of the journal.
  journalSize: 10_000,
  timeouts: {
    streamMaxMs: STREAM_MAX_MS,
    answerMaxMs: 1000,
    stallMaxMs: 1000,
    keepAliveMs: 2000,
    requestMs: 1500,
    headersMs: 1000,
  },
  latency: {
    profile: 'off',
    profiles: { capped: { ttft: 100, interToken: 5, maxRunning: 2, maxWaiting: 3 } },
    models: { 'gpt-4o': 'capped' },
  },
};
// How long the server may take to come back to rest once the clients are done: the streams they left end at once, and
// a queued one waits at most for the capped slots' streams, each at most the stream time limit.
const REST_WITHIN_MS = 15_000;

const RUNS = Number(process.env.HOSTILE_RUNS ?? 8);
const SEED = Number(process.env.HOSTILE_SEED ?? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0);

const model = fc.constantFrom<Ask['model']>('gpt-4o', 'gpt-4o-mini');
// What a request asks of its timing: nothing, a time to first token and a rate, or a profile other than its model's.
const pacing = fc.oneof(
  fc.constant(undefined),
  fc
    .record({ ttft: fc.integer({ min: 0, max: 300 }), tps: fc.integer({ min: 20, max: 400 }) })
    .map(({ ttft, tps }) => `ttft=${ttft}; tps=${tps}`),
  fc.constantFrom('profile=small-fast', 'profile=capped', 'profile=small-fast; tps=50', 'profile=off'),
);
const ask = fc.record<Ask>({ model, stream: fc.boolean(), pacing, long: fc.boolean() });
// A long stream that takes longer than the limit: paced at 200 tokens a second at most (1,300 tokens: 6.5 s).
const longStream = fc.record<Ask>({
  model,
  stream: fc.constant(true),
  pacing: fc.oneof(
    fc.integer({ min: 20, max: 200 }).map((tps) => `tps=${tps}`),
    fc.constant('profile=small-fast'),
  ),
  long: fc.constant(true),
});
const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  fc.record({
    kind: fc.constant('pipeline-leave' as const),
    asks: fc.array(
      ask.map((a) => ({ ...a, stream: true })),
      { minLength: 2, maxLength: 6 },
    ),
    leave: fc.oneof(fc.constantFrom('at-once' as const, 'first-byte' as const), fc.integer({ min: 0, max: 400 })),
  }),
  fc.record({ kind: fc.constant('never-read' as const), ask: longStream }),
  fc.record({ kind: fc.constant('slow-read' as const), ask: longStream }),
  fc.record({ kind: fc.constant('half-close' as const), ask }),
  fc.record({
    kind: fc.constant('abort' as const),
    ask,
    at: fc.constantFrom('before-head' as const, 'after-head' as const, 'mid-body' as const),
    bytes: fc.integer({ min: 1, max: 600 }),
  }),
  fc.record({
    kind: fc.constant('slow-upload' as const),
    ask,
    then: fc.constantFrom('stop' as const, 'drip' as const, 'half-close' as const, 'reset' as const),
  }),
  fc.record({ kind: fc.constant('expect' as const), ask, over: fc.boolean() }),
  fc.record({ kind: fc.constant('http10' as const), ask }),
  fc.record({
    kind: fc.constant('flood' as const),
    count: fc.integer({ min: 50, max: 1000 }),
    leave: fc.integer({ min: 0, max: 500 }),
  }),
);
const scenario = fc.array(behaviour, { minLength: 1, maxLength: 4 });

interface Entry {
  readonly requestId: string;
  readonly status: number;
  readonly stream?: string;
  readonly errorCode?: string;
}

let server: BuiltServer | undefined;
test.before(async () => {
  server = await startBuilt(CONFIG);
});
test.after(async () => {
  await server?.stop();
});

const journal = async (url: string): Promise<Entry[]> =>
  ((await (await fetch(`${url}/__admin/requests`)).json()) as { data: Entry[] }).data;

// What an upload that does not end is answered, and recorded: the request time limit, the end of a body that can never
// be complete, or nothing (the client reset the connection).
const UPLOAD_END = {
  stop: [408, 'request_timeout'],
  drip: [408, 'request_timeout'],
  'half-close': [400, 'incomplete_request'],
  reset: [0, undefined],
} as const;

/** What is wrong with an answer a client saw, or undefined. */
function wrongAnswer(b: Behaviour, seen: Seen): string | undefined {
  const status = (at: number) => seen.slice(at, at + 12);
  if (b.kind === 'expect' && b.over && status(0) !== 'HTTP/1.1 413') return `Expect, over the limit: ${status(0)}`;
  if (b.kind === 'expect' && !b.over && status(0) !== 'HTTP/1.1 100') return `Expect: ${status(0)}, no 100 Continue`;
  if (b.kind === 'slow-upload' && b.then !== 'reset' && status(0) !== `HTTP/1.1 ${UPLOAD_END[b.then][0]}`)
    return `an upload that ${b.then}s: ${status(0)}`;
  if (b.kind === 'http10' && !/^HTTP\/1\.1 (200|429) /.test(seen)) return `HTTP/1.0: ${status(0)}`;
  return undefined;
}

/** What is wrong with the records of one client's requests, or undefined. */
function wrongRecords(b: Behaviour, ids: readonly string[], entries: readonly Entry[]): string | undefined {
  for (const id of ids) {
    const mine = entries.filter((e) => e.requestId === id);
    if (mine.length > 1) return `${id} recorded ${mine.length} times`;
    const [e] = mine;
    if (b.kind === 'slow-upload' || (b.kind === 'expect' && b.over)) {
      const [status, code] = b.kind === 'expect' ? [413, 'request_too_large'] : UPLOAD_END[b.then];
      if (!e) return `${id} (${b.kind}) never recorded`;
      if (e.status !== status || e.errorCode !== code) return `${id} (${b.kind}) recorded ${e.status} ${e.errorCode}`;
      continue;
    }
    if (e && ![0, 200, 429].includes(e.status)) return `${id} answered ${e.status}`;
    if (b.kind === 'http10' && (!e || (e.status === 200 && e.stream === 'aborted')))
      return `${id} (HTTP/1.0) ${e ? 'ended aborted' : 'never recorded'}`;
    // A stream nobody reads (or reads a byte a second of) ends at the stream time limit, however the client reads.
    if (b.kind === 'never-read' || b.kind === 'slow-read') {
      if (!e) return `${id} (${b.kind}) never recorded`;
      if (e.status === 200 && e.stream !== 'timed-out') return `${id} (${b.kind}) ended ${e.stream}, not timed-out`;
    }
  }
  return undefined;
}

let runs = 0;
/** One scenario: its clients at once, then the server at rest, the records right, and the capped model answering. */
async function play(behaviours: readonly Behaviour[]): Promise<void> {
  const { url, port } = server!;
  const run = ++runs;
  await fetch(`${url}/__admin/requests`, { method: 'DELETE' });
  const idsOf = behaviours.map((b, c) => Array.from({ length: requestsOf(b) }, (_, k) => `hostile-${run}-${c}-${k}`));
  const recorded = async (ids: readonly string[]) => {
    const entries = await journal(url);
    return ids.every((id) => entries.some((e) => e.requestId === id));
  };
  const seen = await Promise.all(behaviours.map((b, c) => runClient(port, b, idsOf[c]!, recorded)));
  for (const [c, b] of behaviours.entries()) {
    const wrong = wrongAnswer(b, seen[c]!);
    if (wrong) throw new Error(wrong);
  }
  const deadline = Date.now() + REST_WITHIN_MS;
  let last: Held = await held(url);
  while (!atRest(last)) {
    if (Date.now() > deadline)
      throw new Error(`not at rest ${REST_WITHIN_MS} ms after the clients: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
    last = await held(url);
  }
  const entries = await journal(url);
  for (const [c, b] of behaviours.entries()) {
    const wrong = wrongRecords(b, idsOf[c]!, entries);
    if (wrong) throw new Error(wrong);
  }
  // Nothing held: the capped model answers a plain request at once (its ttft), its slots all free.
  const res = await fetch(`${url}/v1/text-provider/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-mock-default', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.is(res.status, 200);
  await res.arrayBuffer();
}

test('hostile clients, several at once: nothing stays open, no slot stays taken, the time limit holds', async () => {
  const path = process.env.HOSTILE_PATH;
  console.log(`hostile-client battery: seed ${SEED}, ${RUNS} scenarios (replay: HOSTILE_SEED=${SEED})`);
  const details = await fc.check(fc.asyncProperty(scenario, play), {
    seed: SEED,
    numRuns: RUNS,
    endOnFailure: true, // each scenario is a second or more: replay the seed rather than shrink
    ...(path ? { path } : {}),
  });
  if (details.failed) {
    throw new Error(
      `${fc.defaultReportMessage(details)}\n` +
        `Replay: HOSTILE_SEED=${details.seed} HOSTILE_PATH=${details.counterexamplePath} node --import tsx test/run.ts test/hostile`,
    );
  }
});

test.run();
