// One test file, in a process of its own: what test/run.ts starts for each file it runs. It serves
// test/support/uvu.ts for 'uvu' (hooks that cannot fail unseen) and runs the file's suites as uvu's own command
// does, printing uvu's report of the file and its totals, which test/run.ts reads.
//   node --import tsx test/support/runFile.ts FILE NAME [--bail]
import * as nodeModule from 'node:module';
import { parseArgs } from 'node:util';
import { run } from 'uvu/run';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { bail: { type: 'boolean', default: false } },
});
const [file, name] = positionals;
if (!file || !name) throw new Error('usage: runFile.ts FILE NAME [--bail]');

const hooks = new URL('./uvuResolve.ts', import.meta.url);
// module.registerHooks (Node.js 22.15, 23.5 and later) runs the hook in this thread, as tsx does there;
// module.register, deprecated from Node.js 25, is the only way on Node.js 20.
const { registerHooks } = nodeModule as { registerHooks?: (hooks: { resolve: unknown }) => unknown };
if (typeof registerHooks === 'function') {
  const { resolve } = (await import(hooks.href)) as typeof import('./uvuResolve.js');
  registerHooks({ resolve });
} else nodeModule.register(hooks);

await run([{ name, file }], { bail: values.bail });

/**
 * How long a file's process may stay up once its tests are over: a server or a child not closed, an interval not
 * cleared would otherwise hold the whole run forever. Not a measure of anything: clean-up left running after the last
 * hook (a socket closing, a child exiting) takes milliseconds. RUN_LINGER_MS sets it (test/run.test.ts shortens it).
 */
const LINGER_MS = Number(process.env.RUN_LINGER_MS ?? 30_000);
setTimeout(() => {
  const open = process.getActiveResourcesInfo();
  // Not the process's own stdout and stderr (pipes to test/run.ts, or a terminal).
  for (const stdio of [process.stdout, process.stderr]) {
    const at = open.indexOf(stdio.isTTY ? 'TTYWrap' : 'PipeWrap');
    if (at >= 0) open.splice(at, 1);
  }
  process.stderr.write(
    `\n${name}: its tests are over, yet its process was still up ${LINGER_MS / 1000} s later, held by: ${open.join(', ')}\n`,
  );
  process.exit(1);
}, LINGER_MS).unref();
