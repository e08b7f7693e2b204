import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Context } from 'koa';
import { requestState, runSteps, type Step } from '../../src/pipeline/steps.js';

/** Steps that note, each, whether a turn of the event loop asked for in the step before had come. */
function steps(log: string[]): Step[] {
  const step: Step = () => {
    log.push('step');
    setImmediate(() => log.push('turn'));
  };
  return [step, step, step];
}

test("a large body's steps each wait a turn of the event loop; an ordinary body's run on at once", async () => {
  const ctx = {} as Context;
  const ordinary: string[] = [];
  await runSteps(steps(ordinary), ctx, requestState('r1'));
  assert.equal(ordinary, ['step', 'step', 'step']);
  const large: string[] = [];
  const state = requestState('r2');
  state.large = true;
  await runSteps(steps(large), ctx, state);
  assert.equal(large, ['step', 'turn', 'step', 'turn', 'step', 'turn']);
});

test.run();
