import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tuneHeap } from '../../src/cli/heapTuning.js';

test('the old-generation growth is set unless the node command line or NODE_OPTIONS sets it', () => {
  assert.ok(tuneHeap([], ''));
  assert.ok(tuneHeap(['--max-old-space-size=512'], '--trace-gc'));
  assert.not.ok(tuneHeap(['--heap-growing-percent=50'], ''));
  assert.not.ok(tuneHeap([], '--max-old-space-size=512 --heap-growing-percent=50'));
});

test.run();
