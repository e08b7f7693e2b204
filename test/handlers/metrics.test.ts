import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { StreamStats } from '../../src/domain/lateness.js';
import type { ModelLoad } from '../../src/domain/latency/types.js';
import { Metrics, type MetricNames } from '../../src/domain/metrics/metrics.js';
import { packageMetrics } from '../../src/domain/metrics/table.js';
import type { RequestRecord } from '../../src/domain/journal/journal.js';
import { assertError, get, KEY, pathOf, post, request, virtualTimers, withApp, withMock } from '../support/index.js';

const CHAT = pathOf('chat.completions');
const ask = (extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Say something' }],
  ...extra,
});

/** One sample line of the text format: a name, its labels, a value. */
interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

// The text format (version 0.0.4): `# HELP name text`, `# TYPE name type`, or `name{a="b",...} value`.
const COMMENT = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"/g;

/** Every line parsed (a line that is not the format fails the test), and the TYPE of each name. */
function parse(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const comment = COMMENT.exec(line);
    if (comment) {
      if (comment[1] === 'TYPE') {
        assert.not.ok(types.has(comment[2]!), `${comment[2]} typed twice`);
        assert.match(comment[3]!, /^(counter|gauge|histogram|summary)$/);
        types.set(comment[2]!, comment[3]!);
      }
      continue;
    }
    const sample = SAMPLE.exec(line);
    assert.ok(sample, `not a line of the text format: ${line}`);
    // Go's ParseFloat, which Prometheus reads values with, takes NaN and Inf in any case (prom-client writes `Nan`).
    const text = sample[3]!;
    assert.ok(/^[+-]?(\d+(\.\d*)?(e[+-]?\d+)?|inf|nan)$/i.test(text), line);
    const value = /^nan$/i.test(text)
      ? NaN
      : /inf$/i.test(text)
        ? text.startsWith('-')
          ? -Infinity
          : Infinity
        : Number(text);
    const labels = Object.fromEntries([...(sample[2] ?? '').matchAll(LABEL)].map((m) => [m[1]!, m[2]!]));
    samples.push({ name: sample[1]!, labels, value });
  }
  return { samples, types };
}

/** The value of the one sample with this name and these labels (and no others); undefined when absent. */
function value(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const same = (a: Record<string, string>) =>
    Object.keys(a).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => a[k] === v);
  const found = samples.filter((s) => s.name === name && same(s.labels));
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} appears ${found.length} times`);
  return found[0]?.value;
}

const scrape = async (url: string, token?: string) => {
  const res = await get(url, '/metrics', token ?? null);
  assert.is(res.status, 200, res.text);
  return { res, ...parse(res.text) };
};

test('GET /metrics answers the text format, every line of it, with its content type and the process metrics', async () => {
  await withMock({}, async ({ url }) => {
    const { res, types, samples } = await scrape(url);
    assert.is(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    assert.is(types.get('unified_ai_mock_requests_total'), 'counter');
    assert.is(types.get('unified_ai_mock_time_to_first_token_seconds'), 'histogram');
    // prom-client's process metrics, under the mock's prefix: the event-loop lag a load tester checks.
    assert.is(types.get('unified_ai_mock_nodejs_eventloop_lag_seconds'), 'gauge');
    assert.is(value(samples, 'unified_ai_mock_streams_open'), 0);
    assert.not.ok([...types.keys()].some((n) => n.startsWith('vllm:')));
  });
});

test('requests, tokens and end-to-end latency move with requests; a fault is labelled by its kind', async () => {
  await withMock({}, async ({ url }) => {
    const chat = await post(url, CHAT, ask(), KEY);
    assert.is(chat.status, 200);
    const usage = chat.json.usage as { prompt_tokens: number; completion_tokens: number };
    const faulted = await post(url, CHAT, ask(), KEY, { 'X-Mock-Fault': 'status=503;retry-after=2' });
    assert.is(faulted.status, 503);
    await get(url, '/__admin/requests', null); // the admin API is not counted
    const { samples } = await scrape(url);
    const requests = (labels: Record<string, string>) => value(samples, 'unified_ai_mock_requests_total', labels);
    assert.is(requests({ operation: 'chat.completions', status: '200', fault: 'none' }), 1);
    assert.is(requests({ operation: 'chat.completions', status: '503', fault: 'status' }), 1);
    assert.not.ok(samples.some((s) => s.labels.operation?.startsWith('admin.')));
    assert.is(value(samples, 'unified_ai_mock_prompt_tokens_total', { model: 'gpt-4o-mini' }), usage.prompt_tokens);
    assert.is(
      value(samples, 'unified_ai_mock_generation_tokens_total', { model: 'gpt-4o-mini' }),
      usage.completion_tokens,
    );
    const e2e = { model: 'gpt-4o-mini', operation: 'chat.completions' };
    assert.is(value(samples, 'unified_ai_mock_e2e_request_latency_seconds_count', e2e), 2);
    assert.is(value(samples, 'unified_ai_mock_e2e_request_latency_seconds_bucket', { ...e2e, le: '+Inf' }), 2);
    // A scrape is a probe: the journal keeps the client's requests, not the scrapes.
    const journal = await get(url, '/__admin/requests', null);
    assert.equal(
      (journal.json.data as { path: string }[]).map((e) => e.path),
      [CHAT, CHAT],
    );
  });
});

test('a paced stream fills the time to first token and the inter-token histograms, per token', async () => {
  const timers = virtualTimers();
  await withApp({}, { streamTimers: timers }, async (url) => {
    const res = await post(url, CHAT, ask({ stream: true }), KEY, { 'X-Mock-Pacing': 'ttft=200; tps=50' });
    assert.is(res.status, 200);
    const { samples } = await scrape(url);
    const model = { model: 'gpt-4o-mini' };
    const generated = value(samples, 'unified_ai_mock_generation_tokens_total', model)!;
    assert.ok(generated > 2, String(generated));
    assert.is(value(samples, 'unified_ai_mock_time_to_first_token_seconds_count', model), 1);
    // On the virtual clock the first token is written exactly 200 ms after the request arrived.
    assert.ok(Math.abs(value(samples, 'unified_ai_mock_time_to_first_token_seconds_sum', model)! - 0.2) < 1e-9);
    assert.is(value(samples, 'unified_ai_mock_time_to_first_token_seconds_bucket', { ...model, le: '0.1' }), 0);
    assert.is(value(samples, 'unified_ai_mock_time_to_first_token_seconds_bucket', { ...model, le: '0.25' }), 1);
    // Every token but the first has its gap: 20 ms at 50 tokens per second.
    const gaps = value(samples, 'unified_ai_mock_inter_token_latency_seconds_count', model)!;
    assert.is(gaps, generated - 1);
    assert.ok(Math.abs(value(samples, 'unified_ai_mock_inter_token_latency_seconds_sum', model)! / gaps - 0.02) < 1e-9);
    assert.is(value(samples, 'unified_ai_mock_inter_token_latency_seconds_bucket', { ...model, le: '0.01' }), 0);
    assert.is(value(samples, 'unified_ai_mock_inter_token_latency_seconds_bucket', { ...model, le: '0.025' }), gaps);
    // The scheduler's lateness, read from the streams' own histogram: one first event, the rest later ones.
    assert.is(value(samples, 'unified_ai_mock_stream_first_event_lateness_seconds_count'), 1);
    assert.ok(value(samples, 'unified_ai_mock_stream_event_lateness_seconds_count')! > 0);
  });
});

/** A Metrics of its own, on a fake load and stream stats. */
function metricsOn(names: MetricNames, load: ModelLoad, streams = new StreamStats()): Metrics {
  return new Metrics(names, packageMetrics(), { load, streams, models: new Set(['gpt-4o', 'gpt-4o-mini']) });
}

const record = (fields: Partial<RequestRecord>): RequestRecord =>
  ({ requestId: 'req_1', time: 0, method: 'POST', path: CHAT, status: 200, latencyMs: 12, ...fields }) as RequestRecord;

test('running and waiting are read from the load when scraped, for catalogue models only', async () => {
  let running = 3;
  const load: ModelLoad = {
    running: (m) => (m === 'gpt-4o' ? running : 0),
    waiting: (m) => (m === 'gpt-4o' ? 7 : 1),
    models: () => ['gpt-4o', 'not-a-model'],
  };
  const metrics = metricsOn('mock', load);
  let { samples } = parse(await metrics.text());
  assert.is(value(samples, 'unified_ai_mock_requests_running', { model: 'gpt-4o' }), 3);
  assert.is(value(samples, 'unified_ai_mock_requests_waiting', { model: 'gpt-4o' }), 7);
  assert.not.ok(samples.some((s) => s.labels.model === 'not-a-model'));
  running = 5;
  ({ samples } = parse(await metrics.text()));
  assert.is(value(samples, 'unified_ai_mock_requests_running', { model: 'gpt-4o' }), 5);
});

test("under vllm: vLLM's names and its model_name label; both: each name once", async () => {
  const load: ModelLoad = { running: () => 2, waiting: () => 4, models: () => ['gpt-4o'] };
  const vllm = metricsOn('vllm', load);
  vllm.observe(record({ operation: 'chat.completions', model: 'gpt-4o', promptTokens: 9, completionTokens: 30 }));
  const timing = vllm.stream('gpt-4o', 1000)!;
  timing.event(1000, 0); // the role chunk: no token
  timing.event(1150, 1);
  timing.event(1170, 2);
  const { samples, types } = parse(await vllm.text());
  const model = { model_name: 'gpt-4o' };
  assert.is(value(samples, 'vllm:num_requests_running', model), 2);
  assert.is(value(samples, 'vllm:num_requests_waiting', model), 4);
  assert.is(value(samples, 'vllm:prompt_tokens_total', model), 9);
  assert.is(value(samples, 'vllm:generation_tokens_total', model), 30);
  assert.is(value(samples, 'vllm:time_to_first_token_seconds_sum', model), 0.15);
  assert.is(value(samples, 'vllm:inter_token_latency_seconds_count', model), 2);
  assert.ok(Math.abs(value(samples, 'vllm:inter_token_latency_seconds_sum', model)! - 0.02) < 1e-9);
  assert.is(value(samples, 'vllm:e2e_request_latency_seconds_count', model), 1);
  assert.is(types.get('vllm:e2e_request_latency_seconds'), 'histogram');
  assert.not.ok([...types.keys()].some((n) => n.startsWith('unified_ai_mock_') && !isProcess(n)));
  // vLLM's own buckets: its TTFT histogram starts at 1 ms.
  assert.ok(samples.some((s) => s.name === 'vllm:time_to_first_token_seconds_bucket' && s.labels.le === '0.001'));

  const both = parse(await metricsOn('both', load).text()).types;
  for (const row of packageMetrics().metrics) {
    assert.ok(both.has(row.name), row.name);
    if (row.vllm) assert.ok(both.has(row.vllm.name), row.vllm.name);
  }
});

const isProcess = (name: string) =>
  /^unified_ai_mock_(process_|nodejs_)/.test(name) || name === 'unified_ai_mock_nodejs_version_info';

test("a client's unknown model name never becomes a label", async () => {
  const metrics = metricsOn('both', { running: () => 0, waiting: () => 0, models: () => [] });
  metrics.observe(
    record({ operation: 'chat.completions', model: 'x-evil-label', completionTokens: 3, promptTokens: 1 }),
  );
  assert.is(metrics.stream('x-evil-label', 0), undefined);
  assert.is(metrics.stream(42, 0), undefined);
  const text = await metrics.text();
  assert.not.match(text, /x-evil-label/);
  const { samples } = parse(text);
  // The request still counts, under no model.
  assert.is(
    value(samples, 'unified_ai_mock_e2e_request_latency_seconds_count', { model: '', operation: 'chat.completions' }),
    1,
  );
  await withMock({}, async ({ url }) => {
    assertError(await post(url, CHAT, ask({ model: 'x-evil-label' }), KEY), 400);
    const scraped = await get(url, '/metrics', null);
    assert.not.match(scraped.text, /x-evil-label/);
  });
});

test('an injected status outside the table shows as its class: statuses across every path make a bounded set of series', async () => {
  const { statuses } = packageMetrics();
  await withMock({}, async ({ url }) => {
    const paths = [CHAT, pathOf('images.generate'), '/v1/me', '/no/such/path', '/v1/models'];
    for (let status = 400; status <= 599; status++)
      for (const path of paths)
        await request(url, path, {
          method: path === '/v1/me' || path === '/v1/models' ? 'GET' : 'POST',
          headers: { 'x-mock-fault': `status=${status}` },
          raw: '{}',
        });
    const { samples } = await scrape(url);
    const series = samples.filter((s) => s.name === 'unified_ai_mock_requests_total');
    const shown = new Set(series.map((s) => s.labels.status));
    for (const label of shown) assert.ok(label === '4xx' || label === '5xx' || statuses.includes(Number(label)), label);
    assert.ok(shown.has('502') && shown.has('5xx') && shown.has('4xx') && !shown.has('518'), [...shown].join());
    // Per path: each status of the table at most, and the two classes, under the fault's kind.
    assert.ok(series.length <= paths.length * (statuses.length + 2), `${series.length} series`);
    assert.is(
      value(samples, 'unified_ai_mock_requests_total', {
        operation: 'chat.completions',
        status: '5xx',
        fault: 'status',
      }),
      200 - 100 - statuses.filter((n) => n >= 500).length,
    );
  });
});

test('/metrics follows the admin rule: loopback by a loopback name, or the admin token', async () => {
  await withMock({}, async ({ url }) => {
    assertError(await request(url, '/metrics', { key: null, headers: { host: 'evil.example' } }), 403);
  });
  await withMock({ adminToken: 'admin-secret-1234' }, async ({ url }) => {
    assertError(await get(url, '/metrics', null), 403);
    assertError(await get(url, '/metrics', KEY), 403);
    assert.is((await get(url, '/metrics', 'admin-secret-1234')).status, 200);
  });
});

test('with metrics off there is no /metrics: a 404', async () => {
  await withMock({ metrics: 'off' }, async ({ url, services }) => {
    assertError(await get(url, '/metrics', null), 404);
    // No route at all: another method is a 404 too, where a route of the table answers 405.
    assertError(await request(url, '/metrics', { method: 'POST', key: null }), 404);
    assert.is(services.metrics, undefined);
  });
  await withMock({}, async ({ url }) => {
    assertError(await request(url, '/metrics', { method: 'POST', key: null }), 405);
  });
});

test('every metric name is written once, in fixtures/metrics.json: the code types none', () => {
  const names = packageMetrics().metrics.flatMap((row) => [row.name, ...(row.vllm ? [row.vllm.name] : [])]);
  assert.is(new Set(names).size, names.length);
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]));
  for (const file of files('src').filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(file, 'utf8');
    for (const name of names) assert.not.ok(text.includes(name), `${file} types ${name}`);
  }
});

test.run();
