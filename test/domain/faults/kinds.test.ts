// A fault kind is one row of FAULT_KINDS (src/domain/faults/kinds.ts); its bounds are in fixtures/limits.json. The
// config form's schema (schemas/fault-rule.json, $defs/fault) is written by hand for the readers of schemas/: this
// test holds it to the table, kind for kind and bound for bound, so that neither can gain a kind or move a bound alone.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { boundsOf, FAULT_KINDS, FAULT_USAGE, type FaultBounds } from '../../../src/domain/faults/kinds.js';
import { describeFault } from '../../../src/domain/faults/spec.js';
import { parseFaultHeader } from '../../../src/domain/faults/header.js';
import { loadLimits } from '../../../src/domain/limits.js';
import { SCHEMAS_DIR } from '../../../src/lib/paths.js';

interface Property {
  type?: string;
  const?: unknown;
  minimum?: number;
  maximum?: number;
}
const schema = JSON.parse(readFileSync(join(SCHEMAS_DIR, 'fault-rule.json'), 'utf8')) as {
  $defs: { fault: { properties: Record<string, Property> } };
};
const properties = schema.$defs.fault.properties;
const bounds: FaultBounds = loadLimits().faults.bounds;

test('the schema lists the kinds of the table, in its order', () => {
  assert.equal(
    Object.keys(properties),
    FAULT_KINDS.map((k) => k.field),
  );
});

test('a flag is `const: true` in the schema; a number has the bounds of fixtures/limits.json', () => {
  for (const kind of FAULT_KINDS) {
    const property = properties[kind.field]!;
    const range = boundsOf(kind, bounds);
    if (!range) {
      assert.equal(property, { const: true }, kind.field);
      continue;
    }
    assert.equal(
      { minimum: property.minimum, maximum: property.maximum },
      { minimum: range.minimum, maximum: range.maximum },
      kind.field,
    );
    assert.is(property.type, kind.grammar === 'seconds' ? 'number' : 'integer', kind.field);
  }
  assert.equal(
    Object.keys(bounds).sort(),
    FAULT_KINDS.filter((k) => k.grammar !== 'flag')
      .map((k) => k.field)
      .sort(),
  );
});

test('each kind is spelt in the header as its row says, and read back to its field', () => {
  for (const kind of FAULT_KINDS) {
    assert.ok(FAULT_USAGE.includes(kind.usage), kind.field);
    const value = kind.grammar === 'flag' ? '' : `=${kind.grammar === 'status' ? 503 : 1}`;
    const needs = 'needs' in kind ? `;${kind.needs.example.split(';')[0]}` : '';
    const spec = parseFaultHeader(`${kind.header}${value}${needs}`, { maxDelayMs: 60_000 });
    assert.ok(kind.field in spec, kind.field);
    assert.ok(describeFault(spec).includes(kind.header), kind.field);
  }
});

test('a header value past a bound of fixtures/limits.json is refused, naming the bound', () => {
  const tight = {
    maxDelayMs: 60_000,
    faults: { maxQuotedChars: 40, bounds: { ...bounds, streamCut: { minimum: 0, maximum: 5 } } },
  };
  assert.equal(parseFaultHeader('stream-cut=5', tight), { streamCut: 5 });
  assert.throws(() => parseFaultHeader('stream-cut=6', tight), /from 0 to 5/);
  const short = { maxDelayMs: 60_000, faults: { maxQuotedChars: 10, bounds } };
  assert.throws(() => parseFaultHeader('explode-very-loudly', short), /unknown directive 'explode...'/);
});

test.run();
