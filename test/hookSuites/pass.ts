// Suites whose hooks all succeed, named and unnamed: test/run.test.ts runs them as a child of the project's runner,
// which must pass the run and print what uvu's own command prints.
import { suite, test } from 'uvu';
import * as assert from 'uvu/assert';

let ready = false;
const started = suite('started');
started.before(() => void (ready = true));
started.before.each(() => assert.ok(ready));
started.after.each(() => assert.ok(ready));
started.after(() => void (ready = false));
started('one', () => assert.ok(ready));
started('two', () => assert.ok(ready));
started.run();

test.before(async () => void (await Promise.resolve()));
test('unnamed', () => assert.ok(true));
test.run();
