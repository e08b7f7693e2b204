// A suite whose before hook throws (a server that does not start): test/run.test.ts runs it as a child of the
// project's runner, which must fail the run and name the suite and the error.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const starting = suite('starting');
starting.before(() => {
  throw new Error('the server did not start');
});
starting('first', () => assert.ok(true));
starting('second', () => assert.ok(true));
starting.run();
