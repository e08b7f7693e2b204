#!/usr/bin/env node
import './heapTuning.js'; // first: V8 settings apply to everything the process allocates after it
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  ConfigError,
  configSettings,
  defaultKeys,
  readConfigFile,
  windowMsOf,
  type ConfigInput,
  type Setting,
} from '../domain/config.js';
import { maskKey } from '../domain/keys.js';
import { flushLogger } from '../server/logger.js';
import { start } from '../server/server.js';

const HELP = `Usage: unified-ai-mock <command> [options]

Commands:
  serve          run the mock server (default)
  conformance    check an implementation of the API against the suite
  client-check   grade a client of the API: retries, backoff, timeouts on the service's bad days
  openapi        print the OpenAPI 3.1 document (unified-ai-mock openapi > openapi.json)

Run 'unified-ai-mock <command> --help' for the options of a command.
`;

/** A flag of `serve` that sets a setting: named by the setting's `x-flag` in schemas/config.json. */
interface Flag {
  /** The name parseArgs knows it by: `body-limit`. */
  readonly name: string;
  /** As the help shows it: `--body-limit BYTES`. */
  readonly usage: string;
  readonly setting: Setting;
}

// Every setting with an x-flag is a flag: a new flag is one entry in schemas/config.json.
const FLAGS: readonly Flag[] = configSettings().flatMap((setting) => {
  const usage = setting.schema['x-flag'];
  return usage ? [{ name: usage.split(' ')[0]!.replace(/^--/, ''), usage, setting }] : [];
});

const isList = (f: Flag) => f.setting.schema.type === 'array';
const isSwitch = (f: Flag) => f.setting.schema.type === 'boolean';
// A switch turns its setting on, or off when its name says so (--no-fault-headers).
const switchValue = (f: Flag) => !f.name.startsWith('no-');
const dotted = (f: Flag) => f.setting.path.join('.');

// Keys given with --api-key may call every endpoint, like the default keys.
const ALL_SCOPES = defaultKeys()[0]?.scopes ?? [];

// A repeatable flag's values as its setting: the one thing the schema cannot say.
const LISTS: Readonly<Record<string, (values: string[]) => unknown>> = {
  keys: (values) => values.map((key, i) => ({ key, label: `cli-${i + 1}`, scopes: ALL_SCOPES })),
  allowedHosts: (values) => values,
};

const num = (flag: string, v: string) => {
  if (!/^\d+(\.\d+)?$/.test(v)) throw new ConfigError(`--${flag} must be a number, got '${v}'`);
  return Number(v);
};

/** A flag's value as its setting's type: a constant the schema allows (`system`), a number, or the text as given. */
function fromFlag(flag: Flag, raw: string | boolean | (string | boolean)[]): unknown {
  if (typeof raw === 'boolean') return switchValue(flag);
  if (Array.isArray(raw)) {
    const list = LISTS[dotted(flag)];
    if (!list) throw new Error(`no conversion for the repeatable flag --${flag.name}`);
    return list(raw.map(String));
  }
  const branches = [flag.setting.schema, ...(flag.setting.schema.anyOf ?? [])];
  if (branches.some((b) => b.const === raw)) return raw;
  if (branches.some((b) => [b.type ?? []].flat().some((t) => t === 'integer' || t === 'number')))
    return num(flag.name, raw);
  return raw;
}

/** A copy of obj with the value at path (members of groups go into a copy of the group). */
function withValue(
  obj: Record<string, unknown> | undefined,
  path: readonly string[],
  value: unknown,
): Record<string, unknown> {
  const [head, ...rest] = path as [string, ...string[]];
  return {
    ...obj,
    [head]: rest.length ? withValue(obj?.[head] as Record<string, unknown> | undefined, rest, value) : value,
  };
}

const NBSP = '\u00a0';
const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** Words of text in lines of at most width characters, each after indent but the first. */
function wrap(text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join(`\n${indent}`);
}

/** The help of `serve`, written from schemas/config.json: each flag, what it sets and its default. */
export function serveHelp(): string {
  const WIDTH = 100;
  const rows: [string, string][] = [
    ['--config FILE', 'JSON configuration file (checked at start-up; exit 2 when invalid)'],
  ];
  for (const f of FLAGS) {
    const s = f.setting.schema;
    const what = [
      s.description ?? '',
      s.enum ? `: ${s.enum.map(show).join('|')}` : '',
      isList(f) ? '; repeatable' : '',
    ].join('');
    const sets = isSwitch(f) ? `${dotted(f)} = ${switchValue(f)}` : dotted(f);
    // The bracket is kept on one line: no-break spaces until the text is wrapped.
    const bracket = `[${sets}${s.default === undefined ? '' : `; default ${show(s.default)}`}]`.replace(/ /g, NBSP);
    rows.push([f.usage, `${what} ${bracket}`]);
  }
  rows.push(['--help', 'show this help']);
  const column = Math.max(...rows.map(([usage]) => usage.length)) + 4;
  const indent = ' '.repeat(column);
  const options = rows.map(
    ([usage, text]) => `  ${usage.padEnd(column - 2)}${wrap(text, WIDTH - column, indent).replaceAll(NBSP, ' ')}`,
  );
  const others = configSettings()
    .filter((s) => !s.schema['x-flag'])
    .map((s) => s.path.join('.'));
  return `Usage: unified-ai-mock serve [options]

Serves the mock of the Unified AI Model Service API.

Options (each also settable in the --config file under the name in brackets):
${options.join('\n')}

Settings of the --config file only (schemas/config.json describes each):
  ${wrap(others.join(', '), WIDTH - 2, '  ')}
`;
}

/** Turns command-line flags into configuration, over the config file's values. */
export function serveConfig(argv: string[]): ConfigInput | 'help' {
  const parsed = parseArgs({
    args: argv,
    strict: true,
    options: {
      config: { type: 'string' },
      help: { type: 'boolean' },
      ...Object.fromEntries(
        FLAGS.map(
          (f) => [f.name, isSwitch(f) ? { type: 'boolean' } : { type: 'string', multiple: isList(f) }] as const,
        ),
      ),
    },
  });
  const values = parsed.values as Record<string, string | boolean | (string | boolean)[] | undefined>;
  if (values.help) return 'help';
  let input: ConfigInput = typeof values.config === 'string' ? readConfigFile(values.config) : {};
  // A key in a file ends up in a repository sooner or later: the upstream key comes from the flag or the environment.
  if (input.upstreamKey !== undefined)
    throw new ConfigError(
      `${String(values.config)}: upstreamKey may not be given in a file; use --upstream-key KEY or the UPSTREAM_API_KEY environment variable`,
    );
  for (const f of FLAGS) {
    const raw = values[f.name];
    if (raw !== undefined) input = withValue(input, f.setting.path, fromFlag(f, raw)) as ConfigInput;
  }
  return input;
}

async function serve(argv: string[]): Promise<number> {
  const input = serveConfig(argv);
  if (input === 'help') {
    process.stdout.write(serveHelp());
    return 0;
  }
  const mock = await start(input, { log: true, warmPath: true });
  const keys = mock.config.keys.map((k) => {
    const limit = k.rateLimit
      ? ` (rate limit: ${k.rateLimit.requests} requests per ${windowMsOf(k.rateLimit) / 1000} s)`
      : '';
    // The default keys are public fixtures and printed whole; keys given by the user are masked.
    const shown = input.keys ? maskKey(k.key) : k.key;
    return `  ${shown}${input.keys && k.label ? ` (${k.label})` : ''}${limit}`;
  });
  const { proxy, record, replay } = mock.config;
  // The upstream's URL is shown without any user:password part; its key never is.
  const relay = proxy
    ? `proxying to ${proxy.replace(/\/\/[^@/]*@/, '//')}${record ? `, recording into ${record}` : ''}\n`
    : replay
      ? `replaying the cassettes of ${replay}\n`
      : '';
  process.stdout.write(`unified-ai-mock listening on ${mock.url}\n${relay}API keys:\n${keys.join('\n')}\n`);
  // SIGTERM or SIGINT: stop accepting, let requests and streams finish within the grace period, exit 0.
  // A second signal exits at once with 128 + the signal number (130 for SIGINT, 143 for SIGTERM).
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(signal === 'SIGINT' ? 130 : 143);
    stopping = true;
    mock.logger?.info({ signal, graceMs: mock.config.timeouts.shutdownGraceMs }, 'shutting down');
    void mock
      .shutdown()
      .then(() => flushLogger(mock.logger))
      .then(() => process.exit(0));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // One failed request must not take the server down for everyone else: log it and keep serving.
  process.on('uncaughtException', (err) => mock.logger?.error({ err }, 'uncaught exception'));
  process.on('unhandledRejection', (err) => mock.logger?.error({ err }, 'unhandled rejection'));
  return -1; // keep running
}

/** Runs the command line; resolves to the exit code, or -1 while a server keeps running. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === '--help' || command === '-h' || command === 'help') {
      process.stdout.write(HELP);
      return 0;
    }
    if (command === undefined || command.startsWith('-')) return await serve(argv);
    if (command === 'serve') return await serve(rest);
    if (command === 'conformance') {
      if ((await import('../tools/gateway/options.js')).asksForGateway(rest)) {
        // The gateway profile starts the mock as the gateway's upstream: this layer hands it the way to.
        const [{ gatewayConformance }, { startMockServer }] = await Promise.all([
          import('../tools/gateway/cli.js'),
          import('../server/programmatic.js'),
        ]);
        return await gatewayConformance(rest, { startUpstream: (config) => startMockServer(config) });
      }
      return await (await import('../tools/conformance/cli.js')).conformance(rest);
    }
    if (command === 'client-check') {
      const [{ clientCheck }, { startMockServer }] = await Promise.all([
        import('../tools/clientCheck/cli.js'),
        import('../server/programmatic.js'),
      ]);
      return await clientCheck(rest, { startMock: (config) => startMockServer(config) });
    }
    if (command === 'openapi') return await (await import('../tools/openapi/cli.js')).openapi(rest);
    process.stderr.write(`unknown command '${command}'\n\n${HELP}`);
    return 2;
  } catch (err) {
    const e = err as Error & { code?: string };
    if (
      err instanceof ConfigError ||
      e.code?.startsWith('ERR_PARSE_ARGS') ||
      e.code === 'EADDRINUSE' ||
      e.code === 'EACCES'
    ) {
      process.stderr.write(`unified-ai-mock: ${e.message}\n`);
      return 2;
    }
    throw err;
  }
}

/** True when this file is the program being run (directly, or through the npm bin link), not an import. */
function isProgram(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  const self = fileURLToPath(import.meta.url);
  try {
    return realpathSync(script) === self;
  } catch {
    return script === self.replace(/\.[cm]?[jt]s$/, ''); // `node dist/cli` without the extension
  }
}

if (isProgram()) {
  const code = await main(process.argv.slice(2));
  // Exit once standard output and error have taken everything: process.exit does not wait for a pipe,
  // so a JSON report piped to another program would be cut at 64 KiB.
  if (code >= 0) {
    let open = 2;
    const flushed = () => void (--open === 0 && process.exit(code));
    process.stdout.write('', flushed);
    process.stderr.write('', flushed);
  }
}
