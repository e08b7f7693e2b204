// uvu as the project's test runner (test/run.ts) serves it to every test file in place of the package: the same
// suites, with hooks that cannot fail unseen. uvu 0.5 runs a suite's after hooks in a `finally` that ends in
// `return`, and that `return` discards whatever the suite threw: a before hook that throws (a child server that
// does not start, a port taken) skips every test of its suite and the run still passes, without a word; an after
// hook that throws ends the whole run, naming no suite; an after.each hook that throws after a failed test hides
// that failure and skips the rest of the suite. Here those hooks record what they threw, and the suite's result
// carries the records into uvu's own list of failures: the run prints each one with its suite and exits 1.
import { fileURLToPath } from 'node:url';
import { styleText } from 'node:util';
import * as uvu from 'uvu'; // the package itself: test/support/uvuResolve.ts leaves this file's own import alone
import type { Callback, Context, Test } from 'uvu';

/** A hook that threw: which one, and what it threw. */
interface HookFailure {
  readonly hook: 'before' | 'after' | 'after.each';
  readonly error: unknown;
}

/** What uvu's runner of one suite resolves to: its failures (true when none), tests passed, skipped, counted. */
type Result = [errors: string | true, passed: number, skipped: number, total: number];

declare global {
  // uvu's queue of suites to run: one group per test file, its name first (null outside the CLI), then a runner
  // per suite. uvu/run fills it and exec empties it; test/run.ts goes through both.
  var UVU_QUEUE: [string | null, ...(() => Promise<Result>)[]][];
  var UVU_INDEX: number | undefined;
}

/** A suite whose before, after and after.each hooks record what they throw, and whose result reports it. */
function loud<T>(t: Test<T>, name: string): Test<T> {
  const { before, after, run } = t;
  // The failures of the hooks registered since the suite last ran: uvu starts a suite afresh on each run().
  let failures: HookFailure[] = [];
  const recording =
    (hook: HookFailure['hook'], register: (handler: Callback<T>) => void, rethrow: boolean) =>
    (handler: Callback<T>): void => {
      const into = failures;
      register(async (context) => {
        try {
          await handler(context);
        } catch (error) {
          into.push({ hook, error });
          // A before hook's tests cannot run without it: uvu skips them, and still runs the after hooks.
          if (rethrow) throw error;
        }
      });
    };
  // After hooks clean up: one that throws lets the others, the suite's next tests and the other suites run.
  t.before = Object.assign(recording('before', before, true), { each: before.each });
  t.after = Object.assign(recording('after', after, false), { each: recording('after.each', after.each, false) });
  t.run = () => {
    const recorded = failures;
    failures = [];
    run();
    const group = globalThis.UVU_QUEUE[globalThis.UVU_INDEX ?? 0];
    const runner = group.pop() as () => Promise<Result>;
    const where = [group[0], name].filter(Boolean).join(' › ');
    group.push(async () => reported(await runner(), recorded, where));
  };
  return t;
}

/** A suite's result with its hooks' failures, and any test that neither passed nor failed, among its failures. */
export function reported([errors, passed, skipped, total]: Result, recorded: HookFailure[], where: string): Result {
  const blocks = recorded.map(({ hook, error }) => {
    const notRun = hook === 'before' ? `: ${plural(total - passed, 'test')} not run` : '';
    return failure(where, `${hook} hook${notRun}`, error);
  });
  // uvu counts a test that failed among its errors: one that is neither passed nor an error never ran.
  if (errors === true && passed < total && !recorded.some((f) => f.hook === 'before')) {
    const error = new Error('no test failed and no hook threw, yet these tests did not run');
    blocks.push(failure(where, `${total - passed} of ${plural(total, 'test')} not run`, error));
  }
  if (blocks.length === 0) return [errors, passed, skipped, total];
  return [[errors === true ? '' : errors, ...blocks].filter(Boolean).join('\n'), passed, skipped, total];
}

const HERE = fileURLToPath(import.meta.url);

const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** One failure as uvu prints a failed test's: FAIL, the suite, the title, the message and the stack. */
function failure(where: string, title: string, error: unknown): string {
  const err = error instanceof Error ? error : new Error(String(error));
  const head = `  ${styleText(['bold', 'bgRed'], ' FAIL ')}${where ? styleText(['red', 'bold', 'bgWhite'], ` ${where} `) : ''}`;
  const stack = (err.stack ?? '')
    .split('\n')
    .slice(1)
    .map((line) => line.trim())
    // As uvu leaves out Node.js's own frames; this file's frames are the same for every hook.
    .filter((line) => line && !/^at.*(?:\(|\s)(?:node|internal\/)/.test(line) && !line.includes(HERE));
  const trace = stack.length > 0 ? `${styleText('gray', stack.map((line) => `\n    ${line}`).join(''))}\n` : '';
  const quote = styleText('dim', '"');
  return `${head} ${quote}${styleText(['red', 'bold'], title)}${quote}\n    ${err.message}\n${trace}\n`;
}

export const suite = <T = Context>(title?: string, context?: T): Test<T> =>
  loud(uvu.suite(title, context), title ?? '');
export const test: Test<Context> = loud(uvu.test, '');
export const exec = uvu.exec;
