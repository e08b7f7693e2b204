import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EARLY_MS, Pacer, realTimers, type Paced } from '../../src/pipeline/pacer.js';
import { MAX_TIMER_MS } from '../../src/lib/timers.js';
import { tick } from '../support/index.js';
import { HandTimers } from '../support/timers.js';

const job = (name: string, ran: string[], clock?: () => number): Paced => ({
  due: 0,
  slot: -1,
  run: () => void ran.push(clock ? `${name}@${clock()}` : name),
});

test('jobs run at their times, earliest first, and those due at once in the order they were queued', () => {
  const timers = new HandTimers();
  const pacer = new Pacer(timers);
  const ran: string[] = [];
  const times = [50, 10, 30, 10, 20, 40, 30];
  times.forEach((t, i) => pacer.at(job(`j${i}`, ran, timers.now), t));
  timers.advance(100);
  assert.equal(ran, ['j1@10', 'j3@10', 'j4@20', 'j2@30', 'j6@30', 'j5@40', 'j0@50']);
  assert.is(pacer.size, 0);
});

test('a thousand jobs at spread times cost one armed timer at a time, and each runs within EARLY_MS of its time', () => {
  const timers = new HandTimers();
  const pacer = new Pacer(timers);
  const late: number[] = [];
  let maxArmed = 0;
  // Each job queues itself again 20 ms on, as a paced stream does, ten times.
  for (let s = 0; s < 1000; s++) {
    let left = 10;
    const j: Paced = {
      due: 0,
      slot: -1,
      run() {
        late.push(timers.now() - j.due);
        maxArmed = Math.max(maxArmed, timers.pending.size);
        if (--left > 0) pacer.at(j, j.due + 20);
      },
    };
    pacer.at(j, 200 + (s * 1000) / 1000);
  }
  for (let t = 0; t <= 1400; t += 0.5) timers.advance(t);
  assert.is(late.length, 10_000);
  assert.ok(Math.max(...late) <= 0.5, `at most half a turn late, got ${Math.max(...late)}`);
  assert.ok(Math.min(...late) >= -EARLY_MS, `never more than EARLY_MS early, got ${Math.min(...late)}`);
  assert.ok(maxArmed <= 1, `one timer armed at most, saw ${maxArmed}`);
  assert.ok(timers.sets < 3000, `a timer per turn, not per job: ${timers.sets} set for 10,000 runs`);
  assert.is(timers.pending.size, 0, 'nothing armed once the queue is empty');
});

test('a turn runs every job due when it began, however long they take; what falls due meanwhile waits a turn', () => {
  const timers = new HandTimers();
  const pacer = new Pacer(timers);
  const ran: string[] = [];
  // Each job takes a tenth of a millisecond of the clock: 200 of them are 20 ms of work, all due at 10.
  for (let n = 0; n < 200; n++)
    pacer.at(
      {
        due: 0,
        slot: -1,
        run() {
          timers.time += 0.1;
          ran.push(`${n}`);
        },
      },
      10,
    );
  // Due while the turn runs: not in it, though the clock has passed its time when the turn ends.
  pacer.at(job('later', ran, timers.now), 15);
  timers.advance(10);
  assert.equal(
    ran,
    Array.from({ length: 200 }, (_, n) => `${n}`),
    'every job due, once, in order, in the one turn',
  );
  assert.is(pacer.size, 1);
  timers.advance(40);
  assert.is(ran.length, 201);
  assert.match(ran[200]!, /^later@/);
  assert.is(pacer.size, 0);
});

test('moving a queued job and cancelling one keep the queue in order; cancelling the last disarms the timer', () => {
  const timers = new HandTimers();
  const pacer = new Pacer(timers);
  const ran: string[] = [];
  const jobs = Array.from({ length: 12 }, (_, i) => job(`j${i}`, ran));
  jobs.forEach((j, i) => pacer.at(j, 10 * (i + 1)));
  pacer.at(jobs[11]!, 5); // moved to the front
  pacer.cancel(jobs[3]!);
  pacer.cancel(jobs[3]!); // twice is nothing
  pacer.cancel(jobs[0]!);
  pacer.at(jobs[6]!, 1000); // moved to the back
  timers.advance(200);
  assert.equal(ran, ['j11', 'j1', 'j2', 'j4', 'j5', 'j7', 'j8', 'j9', 'j10']);
  pacer.cancel(jobs[6]!);
  assert.is(pacer.size, 0);
  assert.is(timers.pending.size, 0);
});

test('a job queued earlier than the armed timer re-arms it; a job that throws does not stop the others', () => {
  const timers = new HandTimers();
  const pacer = new Pacer(timers);
  const ran: string[] = [];
  pacer.at(job('late', ran, timers.now), 100);
  pacer.at(job('early', ran, timers.now), 10);
  timers.advance(10);
  assert.equal(ran, ['early@10']);
  const boom: Paced = {
    due: 0,
    slot: -1,
    run() {
      throw new Error('boom');
    },
  };
  pacer.at(boom, 50);
  assert.throws(() => timers.advance(60), /boom/);
  timers.advance(100);
  assert.equal(ran, ['early@10', 'late@100']);
});

test('a job that runs may queue itself again, be moved off the top by a job it queues, or cancel itself', () => {
  const timers = new HandTimers();
  const pacer = new Pacer(timers);
  const ran: string[] = [];
  const at = (name: string, due: number, run: (self: Paced) => void = () => {}): Paced => {
    const self: Paced = {
      due: 0,
      slot: -1,
      run: () => {
        ran.push(`${name}@${timers.now()}`);
        run(self);
      },
    };
    pacer.at(self, due);
    return self;
  };
  // Queues itself again (the stream's step), three times.
  let left = 3;
  at('again', 10, (self) => void (--left > 0 && pacer.at(self, timers.now() + 10)));
  // Queues a job due before its own time: the job it displaces from the top while running does not run twice.
  at('displaced', 40, () => at('queued-now', 39.5));
  // Queues itself, then thinks better of it.
  at('cancelled', 45, (self) => {
    pacer.at(self, 60);
    pacer.cancel(self);
  });
  // Cancels itself, then queues itself after a job it queues before it.
  let moves = 1;
  at('moved', 50, (self) => {
    if (moves-- === 0) return;
    pacer.cancel(self);
    at('before', 55);
    pacer.at(self, 58);
  });
  timers.advance(200);
  assert.equal(ran, [
    'again@10',
    'again@20',
    'again@30',
    'displaced@40',
    'queued-now@40',
    'cancelled@45',
    'moved@50',
    'before@55',
    'moved@58',
  ]);
  assert.is(pacer.size, 0);
  assert.is(timers.pending.size, 0);
});

test('the StreamTimers face: waits run their time; clearTimeout cancels them', async () => {
  const stop = new AbortController();
  const timers = new Pacer(realTimers, stop.signal);
  const fired: string[] = [];
  timers.setTimeout(() => fired.push('short'), 1);
  const long = timers.setTimeout(() => fired.push('long'), 60_000);
  const cancelled = timers.setTimeout(() => fired.push('cancelled'), 1);
  timers.clearTimeout(cancelled);
  await new Promise<void>((resolve) => timers.setTimeout(resolve, 5));
  assert.equal(fired, ['short']);
  timers.clearTimeout(long);
  assert.is(timers.size, 0);
  assert.type(timers.now(), 'number');
});

test('at shutdown, pending waits end at once and new ones do not wait; a cleared one stays cleared', async () => {
  const stop = new AbortController();
  const timers = new Pacer(realTimers, stop.signal);
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

test('a job further away than a timer can wait: no timer asks for more than MAX_TIMER_MS, and the job runs at its time', () => {
  const timers = new HandTimers();
  const asked: number[] = [];
  const setTimeout = timers.setTimeout;
  timers.setTimeout = (fn, ms) => (asked.push(ms), setTimeout(fn, ms));
  const pacer = new Pacer(timers);
  const ran: string[] = [];
  const far = 3 * MAX_TIMER_MS + 7;
  pacer.at(job('far', ran, timers.now), far);
  timers.advance(far - 1);
  assert.equal(ran, [], 'woken early by the shorter timers, the job waits on');
  timers.advance(far);
  assert.equal(ran, [`far@${far}`]);
  assert.ok(asked.length > 1 && asked.every((ms) => ms <= MAX_TIMER_MS), asked.join(', '));
});

test.run();
