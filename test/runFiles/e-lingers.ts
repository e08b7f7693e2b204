// Its test passes, but it leaves an interval running, which would keep its process up for ever: test/run.test.ts
// checks that the run fails after the grace period it sets, naming what held the process.
import { test } from 'uvu';
import * as assert from 'uvu/assert';

test('leaves an interval running', () => {
  setInterval(() => {}, 1000);
  assert.ok(true);
});

test.run();
