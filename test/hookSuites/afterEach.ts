// A suite whose after.each hook throws after a failed test, which uvu alone would let hide that failure and skip
// the next test: test/run.test.ts runs it as a child of the project's runner, which must report both and run both.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const each = suite('each');
each.after.each(() => {
  throw new Error('the test left a mess');
});
each('fails', () => assert.is(1, 2, 'the test failed'));
each('runs next', () => assert.ok(true));
each.run();
