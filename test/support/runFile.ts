// One test file, in a process of its own: what test/run.ts starts for each file it runs. It serves
// test/support/uvu.ts for 'uvu' (hooks that cannot fail unseen) and runs the file's suites as uvu's own command
// does, printing uvu's report of the file and its totals, which test/run.ts reads.
//   node --import tsx test/support/runFile.ts FILE NAME [--bail]
import { readFileSync, writeFileSync } from 'node:fs';
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

// The CPU the file cost, its children's included, for the runner's summary: on Linux, /proc/self/stat's user and
// system times of this process and of the children it has waited for (a CLI, a server the file started); elsewhere
// this process's own. Written to the file the runner names (RUN_CPU_FILE) as the process exits.
const cpuFile = process.env.RUN_CPU_FILE;
if (cpuFile) {
  process.once('exit', () => {
    let ms = (process.cpuUsage().user + process.cpuUsage().system) / 1000;
    try {
      // Fields 14-17 (utime, stime, cutime, cstime), counted after the command's closing parenthesis, in the kernel's
      // USER_HZ ticks: a hundredth of a second on Linux.
      const stat = readFileSync('/proc/self/stat', 'utf8');
      const ticks = stat
        .slice(stat.lastIndexOf(')') + 2)
        .split(' ')
        .slice(11, 15)
        .reduce((sum, f) => sum + Number(f), 0);
      if (Number.isFinite(ticks)) ms = ticks * 10;
    } catch {
      // not Linux: this process's own
    }
    writeFileSync(cpuFile, String(Math.round(ms)));
  });
}

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
