// docs/conformance.md's case families, its should cases and cost tables are written from the suite
// (scripts/conformance-docs.ts):
// the committed file must be what the generator renders now.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CONFORMANCE_DOC, renderConformanceDoc } from '../../scripts/conformance-docs.js';

test('the case families, the should cases and the cost of a run in docs/conformance.md are those of the suite', () => {
  const doc = readFileSync(CONFORMANCE_DOC, 'utf8');
  assert.fixture(
    doc,
    renderConformanceDoc(doc),
    'docs/conformance.md is out of date with the suite: run `npm run docs:conformance`',
  );
});

test('a document without the markers is refused, not silently left alone', () => {
  assert.throws(() => renderConformanceDoc('# Conformance\n'), /no markers for the table 'case families'/);
});

test.run();
