// What the conformance runner's and client-check's command lines share: where they write, their exit
// codes, how a usage mistake is told, and the option values both read the same way.
import type { parseArgs } from 'node:util';

/** One token of `parseArgs({ tokens: true })`. */
export type ArgToken = NonNullable<ReturnType<typeof parseArgs>['tokens']>[number];

/** The exit codes: nothing failed (or nothing was run: --help, --plan, --list), something failed, bad usage (or a run
 * that could not start), interrupted (Ctrl-C). */
export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

/** Where a command writes, and its environment; tests pass their own. */
export interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env?: NodeJS.ProcessEnv;
}

/** The process's own standard output and error. */
export const processIo: Io = {
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
};

/** A usage mistake: the CLI prints it with the help hint and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Whether an error is a usage mistake: a UsageError, or one of parseArgs' own (an unknown option, a missing value). */
export function isUsageError(err: unknown): err is Error {
  const code = err instanceof Error ? (err as NodeJS.ErrnoException).code : undefined;
  return err instanceof UsageError || code?.startsWith('ERR_PARSE_ARGS') === true;
}

/** Writes `unified-ai-mock COMMAND: message` to standard error; returns the usage exit code. */
export function commandError(io: Io, command: string, message: string): number {
  io.stderr(`unified-ai-mock ${command}: ${message}\n`);
  return EXIT.usage;
}

/** A usage mistake as the commands tell it: the message, then where the options are described; returns the usage exit
 * code. */
export const usageFailure = (io: Io, command: string, message: string): number =>
  commandError(io, command, `${message}\nRun 'unified-ai-mock ${command} --help' for the options.`);

/** The values of a repeatable option, each of which may also be a comma-separated list: blanks dropped. */
export const listValues = (values: readonly string[] | undefined): string[] =>
  (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);

/** An option's value, one of `allowed`, or `fallback` when the option is absent; a UsageError otherwise. */
export function oneOf<T extends string>(
  flag: string,
  value: string | undefined,
  allowed: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (!allowed.includes(value as T))
    throw new UsageError(`--${flag} must be one of ${allowed.join(', ')}, got '${value}'`);
  return value as T;
}
