// Leaves a global behind: test/run.test.ts runs it before b-isolated.ts, which must not see it (each file has a
// process of its own).
import { test } from 'uvu';
import * as assert from 'uvu/assert';

declare global {
  var leftBehind: string | undefined;
}

test('sets a global and leaves it', () => {
  globalThis.leftBehind = 'a-global.ts';
  assert.ok(true);
});

test.run();
