// The project's test runner: uvu's own (`uvu [dir] [pattern]`, the files under dir whose path matches pattern), with
// test/support/uvu.ts served for 'uvu', so that a suite whose before or after hook throws fails the run, printed
// with its suite (under uvu's bin.js, a before hook that throws passes the run in silence).
//   node --import tsx test/run.ts test '\.test\.ts$'              every test (npm test runs this under c8)
//   node --import tsx test/run.ts test/domain 'journal\.test\.ts$'  the matching files of one folder
//   --bail (-b): stop at the first suite that fails
import { register } from 'node:module';
import { parseArgs } from 'node:util';
import { parse } from 'uvu/parse';
import { run } from 'uvu/run';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { bail: { type: 'boolean', short: 'b', default: false } },
});
const [dir, pattern] = positionals;
// As uvu's bin.js does: its report keeps its colours through a pipe (CI's log, a test's child process).
process.env.FORCE_COLOR = '1';
// module.register, as tsx does: Node.js 20 has no registerHooks.
register(new URL('./support/uvuResolve.ts', import.meta.url));
const { suites } = await parse(dir, pattern);
await run(suites, { bail: values.bail });
