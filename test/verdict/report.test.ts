// The counts both tools' reports end with: a conformance run's cases (four verdicts) and a client
// check's scenarios (never inconclusive), counted and printed by the same code.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { countsLine, countVerdicts } from '../../src/verdict/report.js';

test('verdicts are counted, in the order the JSON reports print the counts', () => {
  const counts = countVerdicts(['pass', 'fail', 'pass', 'inconclusive', 'not-applicable', 'pass']);
  assert.equal(counts, { total: 6, passed: 3, failed: 1, inconclusive: 1, notApplicable: 1 });
  assert.equal(Object.keys(counts), ['total', 'passed', 'failed', 'inconclusive', 'notApplicable']);
  assert.equal(countVerdicts([]), { total: 0, passed: 0, failed: 0, inconclusive: 0, notApplicable: 0 });
});

test('the closing line names inconclusive only where the summary counts it', () => {
  assert.is(countsLine({ passed: 3, failed: 1, inconclusive: 0, notApplicable: 2 }), '3 passed, 1 failed, 0 inconclusive, 2 not applicable');
  assert.is(countsLine({ passed: 3, failed: 4, notApplicable: 1 }), '3 passed, 4 failed, 1 not applicable');
});

test.run();
