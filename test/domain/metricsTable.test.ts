import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SchemaRegistry } from '../../src/contract/schemas.js';
import { checkMetricsTable, packageMetrics, type MetricRow } from '../../src/domain/metrics/table.js';
import { Metrics, type MetricSources } from '../../src/domain/metrics/metrics.js';
import { StreamStats } from '../../src/domain/lateness.js';
import { Slots } from '../../src/domain/latency/slots.js';

const schemas = SchemaRegistry.shared();
const table = packageMetrics(schemas);
const broken = (change: (rows: Record<string, unknown>[]) => void) => {
  const rows = structuredClone(table.metrics) as unknown as Record<string, unknown>[];
  change(rows);
  return () => checkMetricsTable({ ...table, metrics: rows }, schemas);
};

test("the package's table of metrics passes its own checks", () => {
  assert.ok(table.metrics.length > 0);
  assert.is(checkMetricsTable(structuredClone(table), schemas).metrics.length, table.metrics.length);
});

test('a broken table of metrics stops the server, naming the field', () => {
  assert.throws(
    broken((rows) => delete rows.find((r) => r.type === 'histogram')!.buckets),
    /metrics\[\d+\]\.buckets/,
  );
  assert.throws(
    broken((rows) => (rows.find((r) => r.type === 'counter')!.buckets = [1])),
    /does not match/,
  );
  assert.throws(
    broken((rows) => (rows[0]!.name = 'requests_total')),
    /metrics\[0\]\.name/,
  );
  assert.throws(
    broken((rows) => (rows[1]!.labels = ['model', 'tenant'])),
    /labels/,
  );
  assert.throws(
    broken((rows) => rows.push({ ...rows[0]! })),
    /two rows feed requests/,
  );
  assert.throws(
    broken((rows) => (rows.find((r) => r.type === 'histogram')!.buckets = [1, 0.5])),
    /buckets must increase/,
  );
});

test('a metric the code does not feed stops the server at start-up (createServices builds Metrics), naming the row', () => {
  const sources: MetricSources = { load: new Slots(() => undefined), streams: new StreamStats(), models: new Set() };
  const made = (rows: readonly MetricRow[]) => () => new Metrics('both', { ...table, metrics: rows }, sources);
  made(table.metrics)(); // every row of the package's table is fed
  const gauge = table.metrics.find((r) => r.id === 'openStreams')!;
  assert.throws(
    made([...table.metrics.filter((r) => r !== gauge), { ...gauge, type: 'histogram', buckets: [1] }]),
    /unified_ai_mock_streams_open|openStreams.*histogram/,
  );
  assert.throws(
    made([...table.metrics, { ...gauge, id: 'queueDepth' as MetricRow['id'], name: 'queue_depth' }]),
    /queue_depth \(id queueDepth\) is a gauge/,
  );
});

test.run();
