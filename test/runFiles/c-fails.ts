// One test of two fails: test/run.test.ts checks that the run fails, names this file in its summary and prints the
// failure in the file's report.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const failing = suite('failing');
failing('passes', () => assert.ok(true));
failing('fails', () => assert.is(1 + 1, 3, 'planted failure'));
failing.run();
