import { request, Agent } from 'node:http';
import autocannon from 'autocannon';
import type { Answer } from './baseline.js';
import { mean, percentile } from './report.js';
import type { Scenario } from './scenarios.js';

/** Latency and throughput of one autocannon run, measured at full precision from every response. */
export interface Load {
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  readonly responses: number;
  readonly unexpected: number;
  readonly statuses: Record<string, number>;
}

/**
 * What a server answered over one or more loads: the loads of a round are taken in slices, in turns
 * with the other servers', and a server's figures are those of all its slices together.
 */
export class Tally {
  private readonly latencies: number[] = [];
  private readonly statuses: Record<string, number> = {};
  private unexpected = 0;
  private seconds = 0;

  /**
   * Drives `connections` keep-alive connections at the server for `seconds`, each sending the scenario's
   * request as soon as its previous answer has been read in full (streams included), and adds what it got.
   */
  async load(url: string, s: Scenario, connections: number, seconds: number): Promise<void> {
    const tracker = autocannon({
      url: url + s.path,
      method: s.method,
      headers: s.headers,
      body: s.body,
      connections,
      duration: seconds,
      timeout: 30,
    });
    // autocannon's own histogram keeps whole milliseconds; sub-millisecond latencies need the raw values.
    tracker.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      this.latencies.push(ms);
      this.statuses[status] = (this.statuses[status] ?? 0) + 1;
      if (status !== s.expect) this.unexpected++;
    });
    tracker.on('reqError', () => {
      this.statuses.error = (this.statuses.error ?? 0) + 1;
      this.unexpected++;
    });
    this.seconds += ((await tracker) as { duration: number }).duration;
  }

  /** The figures of every load added so far. */
  figures(): Load {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return {
      reqPerSec: sorted.length / this.seconds,
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      meanMs: mean(sorted),
      responses: sorted.length,
      unexpected: this.unexpected,
      statuses: { ...this.statuses },
    };
  }
}

/** One load of `seconds` (see Tally.load) and its figures. */
export async function load(url: string, s: Scenario, connections: number, seconds: number): Promise<Load> {
  const tally = new Tally();
  await tally.load(url, s, connections, seconds);
  return tally.figures();
}

/** One request with its whole answer. */
export function send(url: string, s: Scenario, agent?: Agent): Promise<Answer & { ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url + s.path, { method: s.method, headers: s.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type'] ?? 'application/octet-stream'),
          body: Buffer.concat(chunks),
          stream: String(res.headers['content-type']).startsWith('text/event-stream'),
          ms: performance.now() - started,
        }),
      );
    });
    req.on('error', reject);
    req.end(s.body);
  });
}

/** Sends the scenario once and checks the status: the answer the baseline will then serve. */
export async function capture(url: string, s: Scenario): Promise<Answer> {
  const got = await send(url, s).catch((err: Error) => {
    throw new Error(`${s.name}: ${err.message}`);
  });
  if (got.status !== s.expect)
    throw new Error(`${s.name}: expected ${s.expect}, got ${got.status}: ${got.body.toString('utf8', 0, 300)}`);
  return got;
}

/** Mean milliseconds per request over sequential requests on one connection for about `seconds`. */
export async function sequentialCost(
  url: string,
  s: Scenario,
  seconds: number,
  minRequests = 20,
): Promise<{ meanMs: number; p50Ms: number; requests: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  try {
    const until = performance.now() + seconds * 1000;
    while (performance.now() < until || times.length < minRequests) {
      const got = await send(url, s, agent);
      if (got.status !== s.expect) throw new Error(`${s.name}: expected ${s.expect}, got ${got.status}`);
      times.push(got.ms);
    }
  } finally {
    agent.destroy();
  }
  times.sort((a, b) => a - b);
  return { meanMs: mean(times), p50Ms: percentile(times, 0.5), requests: times.length };
}

/** Opens `count` streams at once, each on its own connection, and counts those that end with [DONE]. */
export async function concurrentStreams(
  url: string,
  s: Scenario,
  count: number,
): Promise<{ completed: number; failed: number; seconds: number }> {
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const started = performance.now();
  const outcomes = await Promise.allSettled(
    Array.from({ length: count }, () =>
      send(url, s, agent).then((got) => {
        if (got.status !== 200 || !got.body.toString('utf8').endsWith('data: [DONE]\n\n'))
          throw new Error(`stream did not complete (status ${got.status})`);
      }),
    ),
  );
  agent.destroy();
  const completed = outcomes.filter((o) => o.status === 'fulfilled').length;
  return { completed, failed: count - completed, seconds: (performance.now() - started) / 1000 };
}
