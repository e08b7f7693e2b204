// Run after a-global.ts by test/run.test.ts: passes only when a-global.ts ran in another process.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const isolated = suite('isolated');
isolated('sees no global from another file', () => assert.is(globalThis.leftBehind, undefined));
isolated('and a second test', () => assert.ok(true));
isolated.run();
