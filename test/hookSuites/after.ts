// A suite whose after hook rejects (a clean-up that fails), then a suite after it: test/run.test.ts runs them as a
// child of the project's runner, which must fail the run, name the suite and the error, and still run the second.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const cleaning = suite('cleaning');
cleaning.after(async () => {
  await Promise.resolve();
  throw new Error('the temporary folder would not go');
});
cleaning('first', () => assert.ok(true));
cleaning.run();

const next = suite('next');
next('runs all the same', () => assert.ok(true));
next.run();
