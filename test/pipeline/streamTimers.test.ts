import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { shutdownTimers } from '../../src/pipeline/streamTimers.js';
import { tick } from '../support/index.js';

test('before shutdown, waits run their time; clearTimeout cancels them', async () => {
  const stop = new AbortController();
  const timers = shutdownTimers(stop.signal);
  const fired: string[] = [];
  timers.setTimeout(() => fired.push('short'), 1);
  const long = timers.setTimeout(() => fired.push('long'), 60_000);
  const cancelled = timers.setTimeout(() => fired.push('cancelled'), 1);
  timers.clearTimeout(cancelled);
  await new Promise<void>((resolve) => timers.setTimeout(resolve, 5));
  assert.equal(fired, ['short']);
  timers.clearTimeout(long);
  assert.type(timers.now(), 'number');
});

test('at shutdown, pending waits end at once and new ones do not wait; a cleared one stays cleared', async () => {
  const stop = new AbortController();
  const timers = shutdownTimers(stop.signal);
  const fired: string[] = [];
  timers.setTimeout(() => fired.push('ttft'), 600_000);
  const cleared = timers.setTimeout(() => fired.push('cleared'), 600_000);
  stop.abort();
  timers.clearTimeout(cleared);
  await tick();
  assert.equal(fired, ['ttft']);
  timers.setTimeout(() => fired.push('after'), 600_000);
  const clearedAfter = timers.setTimeout(() => fired.push('cleared after'), 600_000);
  timers.clearTimeout(clearedAfter);
  await tick();
  assert.equal(fired, ['ttft', 'after']);
});

test.run();
