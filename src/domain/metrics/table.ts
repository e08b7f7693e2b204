import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SchemaRegistry, schemaId } from '../../contract/schemas.js';
import { toDetails } from '../../contract/validation.js';
import { FIXTURES_DIR } from '../../lib/paths.js';

/** What the code feeds a metric from (schemas/metrics.json lists them). */
export type MetricId =
  | 'requests'
  | 'running'
  | 'waiting'
  | 'promptTokens'
  | 'generationTokens'
  | 'timeToFirstToken'
  | 'interTokenLatency'
  | 'e2eLatency'
  | 'firstEventLateness'
  | 'eventLateness'
  | 'openStreams';

export type Label = 'operation' | 'status' | 'fault' | 'model' | 'model_name';

/** One row of fixtures/metrics.json: a metric under the mock's name, and vLLM's where vLLM has it. */
export interface MetricRow {
  readonly id: MetricId;
  readonly name: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly help: string;
  readonly labels: readonly Label[];
  /** A histogram's upper bounds, in seconds. */
  readonly buckets?: readonly number[];
  readonly vllm?: { readonly name: string; readonly labels: readonly Label[] };
}

export interface MetricsTable {
  readonly defaultPrefix: string;
  /** Statuses a `status` label shows as they are; any other shows as its class (`4xx`, `5xx`). */
  readonly statuses: readonly number[];
  readonly metrics: readonly MetricRow[];
}

/** Checks the table against schemas/metrics.json, and what the schema cannot say: one row per id, buckets in order. */
export function checkMetricsTable(
  data: unknown,
  schemas: SchemaRegistry,
  file = 'fixtures/metrics.json',
): MetricsTable {
  const errors = schemas.check(schemaId('metrics.json'), data);
  if (errors.length) {
    const lines = toDetails(errors).map((d) => `  ${d.param ?? '(root)'}: ${d.message}`);
    throw new Error(`${file} does not match schemas/metrics.json:\n${lines.join('\n')}`);
  }
  const table = data as MetricsTable;
  const ids = new Set<string>();
  for (const row of table.metrics) {
    if (ids.has(row.id)) throw new Error(`${file}: two rows feed ${row.id}`);
    ids.add(row.id);
    if (row.buckets?.some((b, i) => i > 0 && b <= row.buckets![i - 1]!))
      throw new Error(`${file}: ${row.name}: buckets must increase`);
  }
  return table;
}

// Read and checked once per registry: every app of a process (tests build hundreds) shares the one reading.
const checked = new WeakMap<SchemaRegistry, MetricsTable>();

/** The package's fixtures/metrics.json, checked (a broken file stops the server at start-up, naming the field). */
export function packageMetrics(schemas: SchemaRegistry = SchemaRegistry.shared()): MetricsTable {
  let table = checked.get(schemas);
  if (!table) {
    const file = join(FIXTURES_DIR, 'metrics.json');
    checked.set(schemas, (table = checkMetricsTable(JSON.parse(readFileSync(file, 'utf8')), schemas)));
  }
  return table;
}
