// The latency model as a load tester meets it: a server, a client that times what arrives. A seeded profile's
// measured first tokens and gaps match the figures it states; the same seed gives the same schedule; a model's cap
// fills its queue and refuses the next request while /metrics shows it; a profile changed through the admin API
// applies from the next request. The server's stream timers run on a virtual clock, which moves only once the
// clients have read all the server wrote to them (test/support/timers.ts): the client reads that clock, so a time
// it measures is the time the server sent, exactly, however busy the machine. (The draws, the slots and the writer
// are tested piece by piece in test/domain/latency and test/pipeline; this is the outside view.)
import { request as httpRequest, type Server } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MockApp } from '../../src/app/createApp.js';
import type { ConfigInput } from '../../src/domain/config.js';
import type { LatencyView, Profile } from '../../src/domain/latency/types.js';
import {
  KEY,
  pathOf,
  virtualTimers,
  waitFor,
  wireOf,
  withApp,
  type VirtualTimers,
  type Wire,
} from '../support/index.js';

const CHAT = pathOf('chat.completions');
const MODEL = 'gpt-4o-mini';

/** A server on the virtual clock, the wire to its clients and the clock. */
interface Bench {
  readonly url: string;
  readonly app: MockApp;
  readonly wire: Wire;
  readonly clock: VirtualTimers;
}

/** What a client saw of one streamed answer: when it sent, when its head and each token's event arrived. */
interface Timed {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly sentAt: number;
  readonly headAt: number;
  readonly tokenAt: number[];
  readonly body: string;
}

/** One streamed answer under way: what has arrived so far, and the whole of it once it ends. */
interface Stream {
  readonly seen: { headAt?: number; readonly tokenAt: number[] };
  readonly done: Promise<Timed>;
}

/** Sends a streamed chat completion of `tokens` tokens; times its events on the bench's clock as they arrive.
 * `onToken` runs as each token arrives (to hold the clock there). */
function streamed(bench: Bench, tokens: number, onToken?: (n: number) => void): Stream {
  const body = JSON.stringify({
    model: MODEL,
    stream: true,
    max_tokens: tokens,
    messages: [{ role: 'user', content: 'Please give me a long answer.' }],
  });
  const seen: Stream['seen'] = { tokenAt: [] };
  const done = new Promise<Timed>((resolve, reject) => {
    const sentAt = bench.clock.now();
    const req = httpRequest(
      `${bench.url}${CHAT}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        agent: false,
      },
      (res) => {
        const headAt = (seen.headAt = bench.clock.now());
        let text = '';
        let pending = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = bench.clock.now();
          text += chunk;
          pending += chunk;
          let end: number;
          while ((end = pending.indexOf('\n\n')) >= 0) {
            const event = pending.slice(0, end);
            pending = pending.slice(end + 2);
            // Each content delta of the reply is one token (the role chunk and the last ones carry none).
            if (!/"content":"[^"]/.test(event)) continue;
            const n = seen.tokenAt.push(at);
            onToken?.(n);
          }
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            sentAt,
            headAt,
            tokenAt: seen.tokenAt,
            body: text,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('socket', (socket) => bench.wire.track(socket));
    req.on('error', reject);
    req.end(body);
  });
  return { seen, done };
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
/** Runs `n` jobs, at most `width` at once. */
async function batches<T>(n: number, width: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += width)
    out.push(...(await Promise.all(Array.from({ length: Math.min(width, n - i) }, (_, k) => job(i + k)))));
  return out;
}
const admin = async <T>(url: string, path: string, init?: RequestInit): Promise<T> =>
  (await (await fetch(`${url}${path}`, init)).json()) as T;

/** Serves the mock with this configuration on a virtual clock that moves only while the wire is quiet. */
async function withBench(config: ConfigInput, fn: (bench: Bench) => Promise<void>): Promise<void> {
  let wire: Wire | undefined;
  const clock = virtualTimers(() => wire?.quiet() ?? true);
  await withApp(config, { streamTimers: clock }, async (url, app, server: Server) => {
    wire = wireOf(server);
    await fn({ url, app, wire, clock });
  });
}
const profileFor = (name: string, profile: Profile, seed = 7): ConfigInput =>
  ({ latency: { profile: name, seed, profiles: { [name]: profile } } }) as ConfigInput;

// A profile a check can tell apart from fixed pacing: a first token with a normal spread, gaps with a long tail.
const MEASURED: Profile = {
  ttft: { type: 'normal', mean: 150, sd: 25, min: 50 },
  interToken: { type: 'lognormal', median: 80, sigma: 0.3, max: 400 },
};

test("a seeded profile's first tokens and 10,000 gaps match the mean and p99 it states, within 5 %", async () => {
  await withBench(profileFor('measured', MEASURED), async (bench) => {
    const stated = (await admin<LatencyView>(bench.url, '/__admin/latency')).profiles.measured!.summary;
    // First tokens: a thousand short streams, timed from the head, which the mock sends once the request
    // holds its slot (the time to first token runs from then): a client's own queueing adds nothing.
    const first = await batches(1000, 100, () => streamed(bench, 1).done);
    const ttft = first.map((r) => r.tokenAt[0]! - r.headAt);
    // Gaps: 200 streams of 51 tokens at once, 10,000 gaps between tokens.
    const long = await batches(200, 200, () => streamed(bench, 51).done);
    const gaps = long.flatMap((r) => r.tokenAt.slice(1).map((at, i) => at - r.tokenAt[i]!));
    assert.equal(gaps.length, 10_000, 'every stream gave all its tokens');
    // The draws are the profile's, so their mean and p99 are its own within the spread of a sample; the scheduler
    // adds nothing on this clock but the millisecond by which it may run a job early (pipeline/pacer.ts, EARLY_MS).
    const within = (what: string, measured: number, expected: number) =>
      assert.ok(
        Math.abs(measured - expected) <= expected * 0.05,
        `${what}: measured ${measured.toFixed(1)} ms, the profile states ${expected.toFixed(1)} ms`,
      );
    within('ttft mean', mean(ttft), stated.ttft!.mean);
    within('ttft p99', quantile(ttft, 0.99), stated.ttft!.p99);
    within('gap mean', mean(gaps), stated.interToken!.mean);
    within('gap p99', quantile(gaps, 0.99), stated.interToken!.p99);
    // Spread as the profile says, not fixed pacing: the draws differ.
    assert.ok(new Set(gaps).size > 1000, `${new Set(gaps).size} different gaps`);
  });
});

test('the same seed gives the same schedule twice; another seed another', async () => {
  const schedule = async (seed: number): Promise<number[]> => {
    let times: number[] = [];
    await withBench(profileFor('measured', MEASURED, seed), async (bench) => {
      // One after the other: the n-th request draws from the seed's n-th stream.
      for (let i = 0; i < 4; i++) {
        const r = await streamed(bench, 6).done;
        times = [...times, r.tokenAt[0]! - r.headAt, ...r.tokenAt.slice(1).map((at, k) => at - r.tokenAt[k]!)];
      }
    });
    return times;
  };
  const [a, b, c] = [await schedule(11), await schedule(11), await schedule(12)];
  assert.equal(a.length, 24);
  assert.equal(b, a, 'the same seed: the same times, to the last digit');
  // The draws of two seeds differ by tens of ms (sd 25 ms each).
  const apart = a.map((v, i) => Math.abs(v - c[i]!));
  assert.ok(quantile(apart, 0.5) > 10, `another seed: a different schedule (median ${quantile(apart, 0.5)} ms apart)`);
});

test('past the cap the queue fills, the time to first token grows with the load, the next request is refused, and /metrics shows it', async () => {
  const capped: Profile = { ttft: 400, interToken: 20, maxRunning: 2, maxWaiting: 2, loadFactor: 3 };
  await withBench(profileFor('capped', capped), async (bench) => {
    const { url, clock } = bench;
    const load = bench.app.services.load;
    const scrape = async () => {
      const text = await (await fetch(`${url}/metrics`)).text();
      const value = (name: string) =>
        Number(new RegExp(`^${name}\\{model="${MODEL}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
      return {
        running: value('unified_ai_mock_requests_running'),
        waiting: value('unified_ai_mock_requests_waiting'),
        ttftSum: value('unified_ai_mock_time_to_first_token_seconds_sum'),
      };
    };
    // Six requests at one instant, the clock held: each is sent once the one before has its slot, its place in the
    // queue or its refusal, so the order of admission is the order of sending.
    clock.hold();
    const calls: Stream[] = [];
    const admitted = [
      () => calls[0]!.seen.headAt !== undefined,
      () => calls[1]!.seen.headAt !== undefined,
      () => load.waiting(MODEL) === 1,
      () => load.waiting(MODEL) === 2,
      () => calls[4]!.seen.headAt !== undefined,
      () => calls[5]!.seen.headAt !== undefined,
    ];
    for (const [i, taken] of admitted.entries()) {
      calls.push(streamed(bench, 3));
      await waitFor(`request ${i + 1} taken in`, taken);
    }
    const during = await scrape();
    clock.release();
    const answers = await Promise.all(calls.map((c) => c.done));
    const after = await scrape();
    assert.equal([during.running, during.waiting], [2, 2], 'scraped while the load runs');
    assert.equal([after.running, after.waiting], [0, 0]);
    // The time to first token /metrics counts runs from the request's arrival, the wait for a slot included, as
    // vLLM's does: the sum is what the clients measured from sending.
    const fromSending = answers.slice(0, 4).reduce((sum, a) => sum + a.tokenAt[0]! - a.sentAt, 0) / 1000;
    assert.ok(
      Math.abs(after.ttftSum - fromSending) < 1e-9,
      `time to first token in /metrics: ${after.ttftSum} s in all, the clients measured ${fromSending} s`,
    );
    assert.equal(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 429, 429],
    );
    const refused = answers[4]!;
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.headers['retry-after-ms'], '1000');
    assert.match(refused.body, /"code":"model_overloaded"/);
    // The first request ran alone (factor 1); the second with both slots taken (factor 3: 1,200 ms).
    assert.equal(
      answers.slice(0, 2).map((a) => a.tokenAt[0]! - a.headAt),
      [400, 1200],
    );
    // The waiting ones got their slot when the first two were over: their answers came after that.
    const firstDone = Math.min(...answers.slice(0, 2).map((a) => a.tokenAt.at(-1)!));
    assert.ok(answers[2]!.tokenAt[0]! > firstDone, 'a waiting request starts once a slot is free');
    const journal = await admin<{ data: { queuedMs?: number; profile?: string }[] }>(url, '/__admin/requests');
    assert.ok(
      journal.data.some((e) => e.profile === 'capped' && (e.queuedMs ?? 0) > 300),
      'the journal shows the wait',
    );
  });
});

test('a profile changed through the admin API mid-run applies from the next request', async () => {
  const quick: Profile = { ttft: 100, interToken: 50 };
  const slow: Profile = { ttft: 700, interToken: 50 };
  await withBench({ latency: { profile: 'quick', profiles: { quick, slow } } } as ConfigInput, async (bench) => {
    const { url, clock } = bench;
    // A stream of a second, its clock held at its first token while the profile changes and the next request comes.
    const running = streamed(bench, 20, (n) => n === 1 && clock.hold());
    await waitFor('the first token of the running stream', () => running.seen.tokenAt.length === 1);
    const view = await admin<LatencyView>(url, '/__admin/latency', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ models: { [MODEL]: 'slow' } }),
    });
    assert.equal(view.models.find((m) => m.model === MODEL)?.profile, 'slow');
    const next = streamed(bench, 2);
    await waitFor('the head of the next request', () => next.seen.headAt !== undefined);
    clock.release();
    const before = await running.done;
    assert.is(before.tokenAt[0]! - before.headAt, 100, 'the running stream kept its profile');
    assert.equal(
      before.tokenAt.slice(1).map((at, i) => at - before.tokenAt[i]!),
      Array.from({ length: 19 }, () => 50),
    );
    const after = await next.done;
    assert.is(after.tokenAt[0]! - after.headAt, 700, 'the next request has the new profile');
    // The running stream's record is made once the server has seen it end, just after the client did.
    const profiles = await waitFor('both requests journalled', async () => {
      const journal = await admin<{ data: { profile?: string }[] }>(url, '/__admin/requests');
      const seen = journal.data.flatMap((e) => (e.profile ? [e.profile] : [])).sort();
      return seen.length === 2 && seen;
    });
    assert.equal(profiles, ['quick', 'slow']);
  });
});

test.run();
