// A test that ends its process before uvu's report: test/run.test.ts checks that the run fails and says so.
import { test } from 'uvu';

test('exits in the middle of the run', () => {
  process.exit(0);
});

test.run();
