// The counts both tools' reports end with: a conformance run's cases (five verdicts) and a client
// check's scenarios (never a warning nor inconclusive), counted and printed by the same code.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { countsLine, countVerdicts } from '../../src/verdict/report.js';

test('verdicts are counted, in the order the JSON reports print the counts', () => {
  const counts = countVerdicts(['pass', 'fail', 'pass', 'warn', 'inconclusive', 'not-applicable', 'warn', 'pass']);
  assert.equal(counts, { total: 8, passed: 3, failed: 1, warnings: 2, inconclusive: 1, notApplicable: 1 });
  assert.equal(Object.keys(counts), ['total', 'passed', 'failed', 'warnings', 'inconclusive', 'notApplicable']);
  assert.equal(countVerdicts([]), { total: 0, passed: 0, failed: 0, warnings: 0, inconclusive: 0, notApplicable: 0 });
});

test('the closing line names warnings and inconclusive only where the summary counts them', () => {
  assert.is(
    countsLine({ passed: 3, failed: 1, inconclusive: 0, notApplicable: 2 }),
    '3 passed, 1 failed, 0 inconclusive, 2 not applicable',
  );
  assert.is(
    countsLine({ passed: 3, failed: 1, warnings: 0, inconclusive: 0, notApplicable: 2 }),
    '3 passed, 1 failed, 0 warnings, 0 inconclusive, 2 not applicable',
  );
  assert.is(
    countsLine({ passed: 3, failed: 0, warnings: 1, inconclusive: 2, notApplicable: 0 }),
    '3 passed, 0 failed, 1 warning, 2 inconclusive, 0 not applicable',
  );
  assert.is(countsLine({ passed: 3, failed: 4, notApplicable: 1 }), '3 passed, 4 failed, 1 not applicable');
});

test.run();
