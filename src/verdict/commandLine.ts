// What every command of unified-ai-mock shares: where it writes, its exit codes, -h/--help and -v/--version, how a
// mistake is told (one prefix, lower-case sentences, the option the user wrote and the one they likely meant), and the
// option values the conformance runner and client-check read the same way.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { packageVersion } from '../lib/paths.js';
import { closest } from '../lib/suggest.js';

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

/** The one prefix of every error and warning the commands print. */
export const PREFIX = 'unified-ai-mock: ';

/** Writes `unified-ai-mock: message` to standard error; returns the usage exit code. The command is named by the hint
 * that follows a usage mistake, not by the prefix. */
export function commandError(io: Io, _command: string, message: string): number {
  io.stderr(`${PREFIX}${message}\n`);
  return EXIT.usage;
}

/** Writes `unified-ai-mock: warning: message` to standard error. */
export function commandWarning(io: Io, message: string): void {
  io.stderr(`${PREFIX}warning: ${message}\n`);
}

/** The switches every command has, as parseArgs options: -h/--help and -v/--version. */
export const COMMON_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

/** What `--version` prints: the package's version alone, as npm, Prism and json-server print theirs. */
export const versionText = (): string => `${packageVersion()}\n`;

/** The long name of the option a parseArgs message quotes (`'-p, --port <value>'` gives `--port`). */
const quotedOption = (message: string): string | undefined => /'(?:-\w, )?(--?[\w-]+)/.exec(message)?.[1];

/** A parseArgs mistake in the commands' words; any other error unchanged. */
function explainParseError(err: unknown, options: readonly string[]): unknown {
  const code = err instanceof Error ? (err as NodeJS.ErrnoException).code : undefined;
  if (!code?.startsWith('ERR_PARSE_ARGS')) return err;
  const message = (err as Error).message;
  const option = quotedOption(message) ?? '';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const long = option.startsWith('--');
    const meant = long ? closest(option.slice(2).split('=')[0]!, options) : undefined;
    return new UsageError(`unknown option '${option}'${meant ? `; did you mean '--${meant}'?` : ''}`);
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (/does not take an argument/.test(message)) return new UsageError(`${option} takes no value`);
    if (/ambiguous/.test(message))
      return new UsageError(`${option} needs a value; for a value that starts with '-', write ${option}=VALUE`);
    return new UsageError(`${option} needs a value`);
  }
  const stray = /'([^']*)'/.exec(message)?.[1];
  return new UsageError(stray === undefined ? message : `unexpected argument '${stray}'`);
}

/** parseArgs, with its mistakes told as UsageErrors that name the option written and the one most likely meant. */
export function parseCommandLine<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    throw explainParseError(err, Object.keys(config.options ?? {}));
  }
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

/**
 * A command's options from its arguments, or its exit code once what ends it at once is written: its help or the
 * version (0), or a usage error (2).
 */
export function parsedOrExit<T extends object>(
  io: Io,
  command: string,
  parse: () => T | 'help' | 'version',
  help: () => string,
): T | number {
  let options: T | 'help' | 'version';
  try {
    options = parse();
  } catch (err) {
    if (!isUsageError(err)) throw err;
    return usageFailure(io, command, err.message);
  }
  if (options === 'help' || options === 'version') {
    io.stdout(options === 'help' ? help() : versionText());
    return EXIT.ok;
  }
  return options;
}
