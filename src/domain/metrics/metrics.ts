import type { Metric, Registry } from 'prom-client';
import { operations } from '../../contract/operations.js';
import { FAULT_KINDS } from '../faults/kinds.js';
import type { RequestRecord } from '../journal/record.js';
import type { LatenessHistogram, StreamStats } from '../lateness.js';
import type { ModelLoad } from '../latency/types.js';
import type { Label, MetricId, MetricRow, MetricsTable } from './table.js';

/** The names GET /metrics serves: the mock's, vLLM's, or both (the `metrics` setting; `off` builds none). */
export type MetricNames = 'mock' | 'vllm' | 'both';

/**
 * A histogram's counts, kept plain: observing is a search of its twenty-odd bounds and three additions. prom-client's
 * own histogram checks and hashes its labels on every observation, even through a child: the stream writer would pay
 * that per token. These are read into the text at scrape time instead.
 */
export class Buckets {
  /** One count per bound, then the values above the last. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  /** Notes `value` (seconds) `times` times. */
  observe(value: number, times = 1): void {
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]! += times;
    this.sum += value * times;
    this.count += times;
  }

  /** How many were at most each bound. */
  cumulative(): number[] {
    const out: number[] = [];
    let seen = 0;
    for (let i = 0; i < this.bounds.length; i++) out.push((seen += this.counts[i]!));
    return out;
  }
}

/**
 * Told of each event a stream writes (pipeline/sse.ts StreamLog.timing), on the stream timers' clock (ms). The first
 * event that carries a token gives the time to first token, from the request's arrival; each later one its gap since
 * the one before, divided by its tokens and noted once per token: the histogram then counts tokens, as vLLM's and the
 * latency profile's per-token gap do, and an event of five tokens weighs five times one of one.
 */
export interface StreamTiming {
  event(now: number, tokens: number): void;
}

class StreamClock implements StreamTiming {
  private last = -1;

  constructor(
    private readonly arrived: number,
    private readonly ttft: Buckets,
    private readonly gaps: Buckets,
  ) {}

  event(now: number, tokens: number): void {
    if (tokens <= 0) return; // a role, finish or usage chunk: no token
    const last = this.last;
    this.last = now;
    if (last < 0) this.ttft.observe(Math.max(0, now - this.arrived) / 1000);
    else this.gaps.observe(Math.max(0, now - last) / 1000 / tokens, tokens);
  }
}

/** What the figures read at scrape time come from. */
export interface MetricSources {
  readonly load: ModelLoad;
  readonly streams: StreamStats;
  /** The catalogue's model ids: the only values a model label takes (a client's unknown name never becomes one). */
  readonly models: ReadonlySet<string>;
}

/** The labels every series is kept under; each name shows those its row lists (model_name is model). */
type Canon = Readonly<Partial<Record<'operation' | 'status' | 'fault' | 'model', string>>>;
type Scalar = { readonly labels: Canon; readonly value: number };
type Histo = {
  readonly labels: Canon;
  readonly cumulative: readonly number[];
  readonly sum: number;
  readonly count: number;
};

// The kinds of injected fault a label may name: the first directive of the fault's header form (faults/kinds.ts).
const FAULT_LABELS: ReadonlySet<string> = new Set(FAULT_KINDS.map((k) => k.header));
const faultKind = (fault: string | undefined): string => {
  if (fault === undefined) return 'none';
  const kind = /^[a-z-]+/.exec(fault)?.[0];
  return kind !== undefined && FAULT_LABELS.has(kind) ? kind : 'other';
};

/** The value of `key` in `map`, made by `make` the first time. */
function within<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}

// The admin API, the inspector and /metrics itself are not the traffic a load test measures: not counted.
const UNCOUNTED = new Set(operations.filter((op) => op.auth === 'admin').map((op) => op.id));

/** The label values of one name's series: canonical labels projected on `names`, or undefined to leave it out. */
function project(labels: Canon, names: readonly Label[]): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = labels[name === 'model_name' ? 'model' : name];
    // vLLM reports its own model only: a series without one (a request that named none) has no vLLM line.
    if (name === 'model_name' && !value) return undefined;
    out[name] = value ?? '';
  }
  return out;
}

/** Series added up by the labels one name shows (vLLM's end-to-end latency has no operation). */
function grouped<T extends { labels: Canon }>(
  series: Iterable<T>,
  names: readonly Label[],
  add: (into: T | undefined, one: T, labels: Record<string, string>) => T & { shown: Record<string, string> },
): (T & { shown: Record<string, string> })[] {
  const out = new Map<string, T & { shown: Record<string, string> }>();
  for (const one of series) {
    const shown = project(one.labels, names);
    if (!shown) continue;
    const key = JSON.stringify(shown);
    out.set(key, add(out.get(key), one, shown));
  }
  return [...out.values()];
}

/** A histogram read at scrape time from counts kept elsewhere, in prom-client's registry (see Buckets for why). */
class HistogramView {
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly Label[],
    private readonly bounds: readonly number[],
    private readonly read: () => Iterable<Histo>,
  ) {}

  // The shape prom-client's Registry formats (its MetricObjectWithValues): the bucket, sum and count lines.
  get() {
    const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
    const series = grouped<Histo>(this.read(), this.labelNames, (into, one, shown) => ({
      labels: one.labels,
      shown,
      cumulative: into ? into.cumulative.map((c, i) => c + one.cumulative[i]!) : one.cumulative,
      sum: (into?.sum ?? 0) + one.sum,
      count: (into?.count ?? 0) + one.count,
    }));
    for (const { shown, cumulative, sum, count } of series) {
      this.bounds.forEach((le, i) =>
        values.push({ metricName: `${this.name}_bucket`, labels: { ...shown, le }, value: cumulative[i]! }),
      );
      values.push({ metricName: `${this.name}_bucket`, labels: { ...shown, le: '+Inf' }, value: count });
      values.push({ metricName: `${this.name}_sum`, labels: shown, value: sum });
      values.push({ metricName: `${this.name}_count`, labels: shown, value: count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** What feeds each metric of a kind, by id: read at scrape time. */
type FeedsOf<T> = Readonly<Partial<Record<MetricId, () => Iterable<T>>>>;

/** A histogram's series from its counts. */
const histo = (labels: Canon, b: Buckets): Histo => ({
  labels,
  cumulative: b.cumulative(),
  sum: b.sum,
  count: b.count,
});

/** A lateness histogram of StreamStats (ms, fine buckets) as seconds under a row's bounds. */
function latenessSeries(histogram: LatenessHistogram, bounds: readonly number[]): Histo[] {
  return [
    {
      labels: {},
      cumulative: histogram.atMost(bounds.map((s) => s * 1000)),
      sum: histogram.sum / 1000,
      count: histogram.count,
    },
  ];
}

/**
 * The figures of one app, in a registry of its own (never prom-client's global one: a process may hold many apps),
 * served as Prometheus text by GET /metrics. Requests and tokens come from each finished request's record (observe),
 * a stream's time to first token and gaps from its writer (stream), the load and the streams' lateness are read when
 * scraped. Everything is kept once, under the mock's labels; each name the setting asks for shows it at scrape time,
 * so `both` costs no more per request than one.
 */
type PromClient = typeof import('prom-client');

export class Metrics {
  /** prom-client's registry, made on the first scrape: a server never scraped does not load the library (start-up
   * time every `npm start` pays). */
  private registry: Promise<Registry> | undefined;
  /** The text format's content type, known once the registry is made. */
  contentType = 'text/plain; version=0.0.4; charset=utf-8';
  // Cells found by nested maps of the labels' own values (catalogue and operation ids, the status as a number): a key
  // made by joining them would be a new text to hash on every request. The lists are what a scrape reads.
  private readonly requests: { labels: Canon; value: number }[] = [];
  private readonly requestCells = new Map<string, Map<string, Map<string, { labels: Canon; value: number }>>>();
  /** The `status` label of each status seen: itself when the table lists it, else its class. */
  private readonly statusLabels = new Map<number, string>();
  private readonly tokens = new Map<string, { prompt: number; generation: number }>();
  private readonly e2e: { labels: Canon; buckets: Buckets }[] = [];
  private readonly e2eCells = new Map<string, Map<string, { labels: Canon; buckets: Buckets }>>();
  private readonly ttft = new Map<string, Buckets>();
  private readonly gaps = new Map<string, Buckets>();
  private readonly bounds: Readonly<Partial<Record<MetricId, readonly number[]>>>;
  private readonly prefix: string;

  constructor(
    private readonly names: MetricNames,
    private readonly table: MetricsTable,
    private readonly sources: MetricSources,
  ) {
    this.prefix = table.defaultPrefix;
    this.bounds = Object.fromEntries(table.metrics.map((row) => [row.id, row.buckets ?? []]));
    // A row the code does not feed would be served empty, forever: refused at start-up instead.
    for (const row of table.metrics) {
      const fed = row.type === 'histogram' ? this.histogramFeeds[row.id] : this.scalarFeeds[row.id];
      if (!fed)
        throw new Error(
          `fixtures/metrics.json: ${row.name} (id ${row.id}) is a ${row.type}, and no ${row.type === 'histogram' ? 'histogram' : 'counter or gauge'} of that id is fed by src/domain/metrics/metrics.ts`,
        );
    }
  }

  /** The request observer (createApp's observers): counts the request, its tokens and its end-to-end time. */
  readonly observe = (record: RequestRecord): void => {
    const operation = record.operation ?? 'none';
    if (UNCOUNTED.has(operation)) return;
    const fault = faultKind(record.fault);
    const status = this.statusLabel(record.status);
    const byFault = within(
      within(this.requestCells, operation, () => new Map()),
      status,
      () => new Map(),
    );
    const cell = byFault.get(fault);
    if (cell) cell.value++;
    else {
      const made = { labels: { operation, status, fault }, value: 1 };
      byFault.set(fault, made);
      this.requests.push(made);
    }
    const model = record.model !== undefined && this.sources.models.has(record.model) ? record.model : '';
    if (model && record.completionTokens !== undefined) {
      const tokens = this.tokens.get(model) ?? { prompt: 0, generation: 0 };
      tokens.prompt += record.promptTokens ?? 0;
      tokens.generation += record.completionTokens;
      this.tokens.set(model, tokens);
    }
    const byOperation = within(this.e2eCells, model, () => new Map());
    let e2e = byOperation.get(operation);
    if (!e2e) {
      byOperation.set(
        operation,
        (e2e = { labels: { model, operation }, buckets: new Buckets(this.bounds.e2eLatency!) }),
      );
      this.e2e.push(e2e);
    }
    e2e.buckets.observe(record.latencyMs / 1000);
  };

  /** A status as the `status` label shows it: as it is when the table lists it, else its class (`5xx`). */
  private statusLabel(status: number): string {
    let label = this.statusLabels.get(status);
    if (label === undefined) {
      label = this.table.statuses.includes(status) ? String(status) : `${Math.floor(status / 100)}xx`;
      // Bounded by the statuses HTTP has (Node's parser answers 100 to 999): a few hundred short strings at most.
      this.statusLabels.set(status, label);
    }
    return label;
  }

  /** What a stream's writer tells of its events (see StreamTiming); `model` as the request named it, `arrived` on the
   * writer's clock. Undefined for a model the catalogue does not have: its stream is not timed. */
  stream(model: unknown, arrived: number): StreamTiming | undefined {
    if (typeof model !== 'string' || !this.sources.models.has(model)) return undefined;
    return new StreamClock(
      arrived,
      this.buckets(this.ttft, model, 'timeToFirstToken'),
      this.buckets(this.gaps, model, 'interTokenLatency'),
    );
  }

  /** The text of every metric, in the registry's content type (prom-client's Prometheus text format). */
  async text(): Promise<string> {
    return (await (this.registry ??= this.made())).metrics();
  }

  /** The registry with every metric of the table under the names asked for, and the process's own metrics. */
  private async made(): Promise<Registry> {
    const prom = await import('prom-client');
    const registry = new prom.Registry();
    for (const row of this.table.metrics) {
      if (this.names !== 'vllm') this.register(prom, registry, row, row.name, row.labels);
      if (this.names !== 'mock' && row.vllm) this.register(prom, registry, row, row.vllm.name, row.vllm.labels);
    }
    // Started on the first scrape too: an app never scraped (most tests build hundreds) runs no event-loop monitor.
    prom.collectDefaultMetrics({ register: registry, prefix: this.prefix });
    this.contentType = registry.contentType;
    return registry;
  }

  private buckets(map: Map<string, Buckets>, model: string, id: MetricId): Buckets {
    let buckets = map.get(model);
    if (!buckets) map.set(model, (buckets = new Buckets(this.bounds[id]!)));
    return buckets;
  }

  /** The series of each counter or gauge, read when scraped. */
  private readonly scalarFeeds: FeedsOf<Scalar> = {
    requests: () => this.requests,
    running: () => this.loaded().map((model) => ({ labels: { model }, value: this.sources.load.running(model) })),
    waiting: () => this.loaded().map((model) => ({ labels: { model }, value: this.sources.load.waiting(model) })),
    promptTokens: () => [...this.tokens].map(([model, t]) => ({ labels: { model }, value: t.prompt })),
    generationTokens: () => [...this.tokens].map(([model, t]) => ({ labels: { model }, value: t.generation })),
    openStreams: () => [{ labels: {}, value: this.sources.streams.open }],
  };

  /** The series of each histogram, read when scraped. */
  private readonly histogramFeeds: FeedsOf<Histo> = {
    timeToFirstToken: () => [...this.ttft].map(([model, b]) => histo({ model }, b)),
    interTokenLatency: () => [...this.gaps].map(([model, b]) => histo({ model }, b)),
    e2eLatency: () => this.e2e.map((s) => histo(s.labels, s.buckets)),
    firstEventLateness: () => latenessSeries(this.sources.streams.firstEvents, this.bounds.firstEventLateness!),
    eventLateness: () => latenessSeries(this.sources.streams.events, this.bounds.eventLateness!),
  };

  /** The catalogue's models that have slots on this instance. */
  private loaded(): string[] {
    return [...this.sources.load.models()].filter((m) => this.sources.models.has(m));
  }

  private register(prom: PromClient, registry: Registry, row: MetricRow, name: string, labels: readonly Label[]): void {
    if (row.type === 'histogram') {
      const view = new HistogramView(name, row.help, labels, row.buckets!, this.histogramFeeds[row.id]!);
      // A metric in all but its class: the registry reads name, type and get() (prom-client 15's Registry).
      registry.registerMetric(view as unknown as Metric);
      return;
    }
    const scalars = () =>
      grouped<Scalar>(this.scalarFeeds[row.id]!(), labels, (into, one, shown) => ({
        labels: one.labels,
        shown,
        value: (into?.value ?? 0) + one.value,
      }));
    const config = { name, help: row.help, labelNames: labels, registers: [registry] };
    // Counters and gauges are set from the figures kept here when scraped (prom-client's collect), none on each request.
    if (row.type === 'counter')
      new prom.Counter({
        ...config,
        collect() {
          this.reset();
          for (const { shown, value } of scalars()) this.inc(shown, value);
        },
      });
    else
      new prom.Gauge({
        ...config,
        collect() {
          this.reset();
          for (const { shown, value } of scalars()) this.set(shown, value);
        },
      });
  }
}
