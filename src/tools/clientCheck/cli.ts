import { SchemaRegistry } from '../../contract/schemas.js';
import {
  commandError,
  COMMON_OPTIONS,
  EXIT,
  isUsageError,
  listValues,
  parseCommandLine,
  processIo,
  usageFailure,
  UsageError,
  versionText,
  type Io as CommandIo,
} from '../../verdict/commandLine.js';
import { openReporters, reporterChoices, type ReporterChoice } from '../../verdict/reporterChoice.js';
import { CommandError, commandLaunch } from './command.js';
import { summarize, type CheckInfo, type CheckReporter, type ScenarioResult } from './report.js';
import { jsonReporter } from './reporters/json.js';
import { junitReporter } from './reporters/junit.js';
import { prettyReporter } from './reporters/pretty.js';
import { runScenario, type StartMock } from './run.js';
import { loadScenarios, ScenarioError, selectScenarios, type Scenario } from './scenarios.js';

/** Where the command writes, and its environment; tests pass their own. */
export interface Io extends CommandIo {
  /** Aborted to stop the run (Ctrl-C): the command under test is ended and the run exits 130. */
  readonly signal?: AbortSignal;
}

const COMMAND = 'client-check';

type ReporterName = 'pretty' | 'json' | 'junit';
const REPORTERS: Record<ReporterName, (write: (t: string) => void) => CheckReporter> = {
  pretty: prettyReporter,
  json: jsonReporter,
  junit: junitReporter,
};
/** The longest declared client timeout: the mock holds a first token at most 600 s. */
const MAX_CLIENT_TIMEOUT_MS = 300_000;

export const clientCheckHelp = (): string => `Usage: unified-ai-mock client-check [options] -- <command> [args...]

Grades a client of the API on the service's bad days. For each scenario a fresh mock plays a fault
script (429s, 5xx, resets, cut streams, held answers, a rate-limit storm); the command runs with
OPENAI_BASE_URL, OPENAI_API_KEY, MOCK_SCENARIO (the scenario's name) and MOCK_CONCURRENCY set; the
mock's request journal and the command's exit status show whether the client retried, waited, backed
off, gave up and timed out as it should. Exit code: 0 no scenario failed, 1 a scenario failed,
2 bad usage or a command that cannot be run.

Options:
  --scenario NAME        run only this scenario, or those with this tag (retry, no-retry,
                         connection, stream, timeout, concurrency, body); repeatable or
                         comma-separated
  --client-timeout MS    the client's own request timeout; the timeout scenarios need it
  --reporter NAME        pretty, json or junit (repeatable; default: pretty)
  --output FILE          write the reporter named just before it to FILE (else standard output)
  --list                 list the scenarios and what each checks, and run nothing
  -h, --help             show this help
  -v, --version          print the version

Example:
  npx unified-ai-mock client-check --client-timeout 5000 -- node scripts/ask.mjs

The scenarios and recipes for the openai SDK, the AI SDK and LangChain: docs/client-check.md.
`;

/** Everything the command was asked to do. */
interface ClientCheckOptions {
  readonly scenarios: string[];
  readonly clientTimeoutMs?: number;
  readonly reporters: ReporterChoice<ReporterName>[];
  readonly list: boolean;
  readonly command: string[];
}

/** Parses the command line of `client-check`; 'help' for --help, 'version' for --version. Throws UsageError on a
 * mistake. */
export function parseClientCheckArgs(argv: string[]): ClientCheckOptions | 'help' | 'version' {
  const parsed = parseCommandLine({
    args: argv,
    strict: true,
    allowPositionals: true,
    tokens: true,
    options: {
      scenario: { type: 'string', multiple: true },
      'client-timeout': { type: 'string' },
      reporter: { type: 'string', multiple: true },
      output: { type: 'string', multiple: true },
      list: { type: 'boolean' },
      ...COMMON_OPTIONS,
    },
  });
  const v = parsed.values;
  if (v.help) return 'help';
  if (v.version) return 'version';
  const tokens = parsed.tokens ?? [];
  const terminator = tokens.findIndex((t) => t.kind === 'option-terminator');
  const stray = tokens.find((t, i) => t.kind === 'positional' && (terminator < 0 || i < terminator));
  if (stray && stray.kind === 'positional')
    throw new UsageError(`unexpected argument '${stray.value}': put the command to check after '--'`);
  const reporters = reporterChoices(tokens, Object.keys(REPORTERS) as ReporterName[]);
  const timeout = v['client-timeout'];
  if (
    timeout !== undefined &&
    (!/^\d+$/.test(timeout) || Number(timeout) < 1 || Number(timeout) > MAX_CLIENT_TIMEOUT_MS)
  ) {
    throw new UsageError(
      `--client-timeout must be a whole number of ms from 1 to ${MAX_CLIENT_TIMEOUT_MS}, got '${timeout}'`,
    );
  }
  const command = parsed.positionals;
  const list = v.list ?? false;
  if (!list && !command.length)
    throw new UsageError("no command to check: give it after '--', e.g. client-check -- node client.mjs");
  return {
    scenarios: listValues(v.scenario),
    ...(timeout !== undefined ? { clientTimeoutMs: Number(timeout) } : {}),
    reporters,
    list,
    command,
  };
}

/** The scenarios in a few lines each: for --list. */
function listing(scenarios: readonly Scenario[]): string {
  const lines = scenarios.flatMap((s) => {
    const needs = s.needs?.length ? `; needs: ${s.needs.join(', ')}` : '';
    return [`${s.id}  [${(s.tags ?? []).join(', ')}${needs}]`, `  ${s.title}`, `  a good client: ${s.good}`, ''];
  });
  return `${lines.join('\n')}`;
}

/** Shell-like display of the command, for reports. */
const shown = (argv: readonly string[]) =>
  argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');

/** `unified-ai-mock client-check`: resolves to the exit code (0 no failure, 1 a failure, 2 usage or a command that
 * cannot run, 130 interrupted). */
export async function clientCheck(argv: string[], deps: { startMock: StartMock }, io: Io = processIo): Promise<number> {
  let options: ClientCheckOptions | 'help' | 'version';
  let scenarios: Scenario[];
  try {
    options = parseClientCheckArgs(argv);
    if (options === 'help' || options === 'version') {
      io.stdout(options === 'help' ? clientCheckHelp() : versionText());
      return EXIT.ok;
    }
    scenarios = selectScenarios(loadScenarios(SchemaRegistry.shared()), options.scenarios);
  } catch (err) {
    if (!isUsageError(err) && !(err instanceof ScenarioError)) throw err;
    return usageFailure(io, COMMAND, err.message);
  }
  if (options.list) {
    io.stdout(listing(scenarios));
    return EXIT.ok;
  }
  const reporters = openReporters(options.reporters, REPORTERS, io.stdout);
  const info: CheckInfo = {
    client: shown(options.command),
    ...(options.clientTimeoutMs !== undefined ? { clientTimeoutMs: options.clientTimeoutMs } : {}),
    scenarios,
  };
  const launch = commandLaunch(options.command, io.env ?? process.env);
  reporters.start(info);
  const started = performance.now();
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    if (io.signal?.aborted) return EXIT.interrupted;
    let grade;
    try {
      grade = await runScenario(
        scenario,
        (context) =>
          launch({ ...context, signal: io.signal ? AbortSignal.any([context.signal, io.signal]) : context.signal }),
        deps.startMock,
        {
          clientTimeoutMs: options.clientTimeoutMs,
        },
      );
    } catch (err) {
      if (!(err instanceof CommandError)) throw err;
      return commandError(io, COMMAND, err.message);
    }
    results.push({ scenario, grade });
    reporters.result({ scenario, grade }, results.length, scenarios.length);
  }
  if (io.signal?.aborted) return EXIT.interrupted;
  return reporters.finish({ info, results, summary: summarize(results, Math.round(performance.now() - started)) });
}
