// The command-line kit the conformance runner and client-check share: how a usage mistake is told and
// with which exit code, and the option values both read the same way.
import { parseArgs } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  commandError,
  EXIT,
  isUsageError,
  listValues,
  oneOf,
  usageFailure,
  UsageError,
  type Io,
} from '../../src/verdict/commandLine.js';

/** An Io that keeps what is written. */
function captured(): Io & { out: string; err: string } {
  const io = { out: '', err: '', stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t) };
  return io;
}

/** The error parseArgs throws for a command line, or undefined. */
function parseError(args: string[]): unknown {
  try {
    parseArgs({ args, strict: true, options: { only: { type: 'string' } } });
    return undefined;
  } catch (err) {
    return err;
  }
}

test('usage mistakes: a UsageError and parseArgs own errors are, anything else is not', () => {
  assert.ok(isUsageError(new UsageError('--timeout must be a whole number')));
  assert.ok(isUsageError(parseError(['--bogus'])), 'an unknown option');
  assert.ok(isUsageError(parseError(['--only'])), 'an option without its value');
  assert.not.ok(isUsageError(new Error('disk full')));
  assert.not.ok(isUsageError(Object.assign(new Error('in use'), { code: 'EADDRINUSE' })));
  assert.not.ok(isUsageError('ERR_PARSE_ARGS_UNKNOWN_OPTION'), 'a thrown string is no usage error');
});

test('a usage mistake is told on standard error with the hint to --help, and exits 2; another error without the hint', () => {
  const io = captured();
  assert.is(usageFailure(io, 'client-check', "unknown option '--bogus'"), 2);
  assert.is(
    io.err,
    "unified-ai-mock: unknown option '--bogus'\nRun 'unified-ai-mock client-check --help' for the options.\n",
  );
  const other = captured();
  assert.is(commandError(other, 'conformance', 'cannot reach http://127.0.0.1:1: ECONNREFUSED'), EXIT.usage);
  assert.is(other.err, 'unified-ai-mock: cannot reach http://127.0.0.1:1: ECONNREFUSED\n');
  assert.is(io.out + other.out, '', 'nothing on standard output');
});

test('the exit codes', () => {
  assert.equal(EXIT, { ok: 0, failed: 1, usage: 2, interrupted: 130 });
});

test('list options: repeatable, each comma-separated, blanks dropped', () => {
  assert.equal(listValues(['chat,image', ' video ', ',,', 'tts, ']), ['chat', 'image', 'video', 'tts']);
  assert.equal(listValues(undefined), []);
});

test('one of a few values: the fallback when absent, a UsageError naming the values otherwise', () => {
  assert.is(oneOf('profile', undefined, ['documented', 'full'], 'documented'), 'documented');
  assert.is(oneOf('profile', 'full', ['documented', 'full'], 'documented'), 'full');
  assert.throws(
    () => oneOf('profile', 'fast', ['documented', 'full'], 'documented'),
    (err: unknown) =>
      err instanceof UsageError && err.message === "--profile must be one of documented, full, got 'fast'",
  );
});

test.run();
