import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { systemClock } from '../../src/domain/clock.js';

test('each app gets its own clock object, so a test replacing one leaves the others alone', () => {
  const a = systemClock();
  const b = systemClock();
  a.now = () => 42;
  assert.is(a.now(), 42);
  assert.is.not(b.now(), 42);
});

test('sleep resolves after its time, at once for an aborted signal, and early when the signal aborts', async () => {
  const clock = systemClock();
  await clock.sleep(1);
  const gone = new AbortController();
  gone.abort();
  await clock.sleep(600_000, gone.signal);
  const leaving = new AbortController();
  const long = clock.sleep(600_000, leaving.signal).then(() => 'woke');
  leaving.abort();
  // Without the abort this sleep would hold the test for ten minutes; the race makes that a failure.
  const outcome = await Promise.race([long, new Promise((resolve) => setTimeout(resolve, 5_000, 'stuck').unref())]);
  assert.is(outcome, 'woke');
});

test('a sleep longer than a timer can wait waits in turns: no timer overflows (Node would fire it at once)', async () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => void warnings.push(w);
  process.on('warning', onWarning);
  try {
    const leaving = new AbortController();
    let woke = false;
    const long = systemClock()
      .sleep(2 ** 31 + 10, leaving.signal)
      .then(() => void (woke = true));
    // An overflowing timer fires after 1 ms; these 20 ms only give it the time to, were it there.
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.not.ok(woke, 'still asleep');
    leaving.abort();
    await long;
    assert.equal(
      warnings.filter((w) => w.name === 'TimeoutOverflowWarning'),
      [],
    );
  } finally {
    process.off('warning', onWarning);
  }
});

test.run();
