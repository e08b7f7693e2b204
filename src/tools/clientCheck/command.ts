import { spawn } from 'node:child_process';
import type { Launch, LaunchOutcome } from './run.js';

/** The command could not be started at all (not found, not executable): a usage error, exit 2. */
export class CommandError extends Error {
  override name = 'CommandError';
}

/** How much of the command's output a report keeps: its end, where the error usually is. */
const OUTPUT_TAIL = 4_000;
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
/** After SIGTERM, a stopped command gets this long before SIGKILL. */
const KILL_GRACE_MS = 2_000;

/** Sends a signal to the command and everything it started (its process group); false when it is gone. */
function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * A launcher that runs the user's command (argv, no shell) with the scenario's variables added to this
 * process's environment. Its output is kept (the last few KB) for the report rather than shown, so that a
 * JSON or JUnit report on standard output stays valid. A stopped command is ended with its children.
 * Rejects with a CommandError when the command cannot be started, or when it exits 127 saying "not
 * found" (a shell or npx that could not find the program).
 */
export function commandLaunch(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Launch {
  return (context) =>
    new Promise<LaunchOutcome>((resolve, reject) => {
      const [file, ...args] = argv as [string, ...string[]];
      let output = '';
      // Colour codes (a child that sees FORCE_COLOR) are dropped: reports are plain text.
      const keep = (chunk: Buffer) => {
        output = (output + chunk.toString('utf8').replace(ANSI, '')).slice(-OUTPUT_TAIL);
      };
      const child = spawn(file, args, {
        env: { ...env, ...context.env },
        stdio: ['ignore', 'pipe', 'pipe'],
        // Its own process group, so a stop reaches whatever it started (npm, a shell, node).
        detached: process.platform !== 'win32',
      });
      child.stdout.on('data', keep);
      child.stderr.on('data', keep);
      let killer: NodeJS.Timeout | undefined;
      const onStop = () => {
        if (child.pid === undefined || !signalGroup(child.pid, 'SIGTERM')) return;
        killer = setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), KILL_GRACE_MS);
      };
      context.signal.addEventListener('abort', onStop, { once: true });
      child.on('error', (err: NodeJS.ErrnoException) => {
        context.signal.removeEventListener('abort', onStop);
        reject(new CommandError(`cannot run '${file}': ${err.code === 'ENOENT' ? 'command not found' : err.message}`));
      });
      child.on('close', (code, signal) => {
        clearTimeout(killer);
        context.signal.removeEventListener('abort', onStop);
        // What the command left running in its group ends with it.
        if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
        if (code === 127 && !context.signal.aborted && /not found|No such file/i.test(output)) {
          reject(
            new CommandError(
              `cannot run '${argv.join(' ')}': exit 127 (command not found): ${output.trim().split('\n').pop()}`,
            ),
          );
          return;
        }
        resolve({ exitCode: code, ...(signal ? { signal } : {}), output });
      });
    });
}
