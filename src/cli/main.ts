#!/usr/bin/env node
import './heapTuning.js'; // first: V8 settings apply to everything the process allocates after it
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SchemaRegistry } from '../contract/schemas.js';
import { Catalogue } from '../domain/catalogue.js';
import {
  checkConfig,
  ConfigError,
  configSettings,
  defaultKeys,
  readConfigFile,
  windowMsOf,
  type ConfigInput,
  type Setting,
  type SettingSchema,
} from '../domain/config.js';
import { maskKey } from '../domain/keys.js';
import { closest } from '../lib/suggest.js';
import { flushLogger } from '../server/logger.js';
import { addressesOf } from '../server/programmatic.js';
import { start } from '../server/server.js';
import {
  commandError,
  commandWarning,
  COMMON_OPTIONS,
  isUsageError,
  parseCommandLine,
  PREFIX,
  processIo,
  usageFailure,
  versionText,
  type Io,
} from '../verdict/commandLine.js';

/** The commands, each with its one line of the top-level help. */
const COMMANDS: Readonly<Record<string, string>> = {
  serve: 'run the mock server (the default command)',
  conformance: 'check an implementation of the API against the conformance suite',
  'client-check': "grade a client of the API on the service's bad days",
  openapi: 'print the OpenAPI 3.1 document',
};

const HELP = `Usage: unified-ai-mock [command] [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, line]) => `  ${name.padEnd(14)}${line}`)
  .join('\n')}

Options:
  -h, --help    show this help, or a command's with 'unified-ai-mock <command> --help'
  -v, --version print the version

Documentation: README.md and docs/ (shipped in the package too).
`;

/** A flag of `serve` that sets a setting: named by the setting's `x-flag` in schemas/config.json. */
interface Flag {
  /** The name parseArgs knows it by: `body-limit`. */
  readonly name: string;
  /** As the help shows it: `--body-limit BYTES`, after `-p, ` when it has a one-letter form. */
  readonly usage: string;
  readonly setting: Setting;
}

// Every setting with an x-flag is a flag: a new flag is one entry in schemas/config.json.
const FLAGS: readonly Flag[] = configSettings().flatMap((setting) => {
  const usage = setting.schema['x-flag'];
  const short = setting.schema['x-short'];
  return usage
    ? [{ name: usage.split(' ')[0]!.replace(/^--/, ''), usage: short ? `${short}, ${usage}` : usage, setting }]
    : [];
});

/** Old names of flags, still accepted with a warning: the name a reader confused, and the one to write now. */
const DEPRECATED: Readonly<Record<string, string>> = {
  // --profile sat beside --latency PROFILE, whose profiles are another thing altogether.
  profile: 'validation-profile',
};

const isList = (f: Flag) => f.setting.schema.type === 'array';
const isSwitch = (f: Flag) => f.setting.schema.type === 'boolean';
// A switch turns its setting on, or off when its name says so (--no-fault-headers).
const switchValue = (f: Flag) => !f.name.startsWith('no-');
const dotted = (f: Flag) => f.setting.path.join('.');

// Keys given with --api-key may call every endpoint, like the default keys.
const ALL_SCOPES = defaultKeys()[0]?.scopes ?? [];

// A repeatable flag's values as its setting: the one thing the schema cannot say.
const LISTS: Readonly<Record<string, (values: string[]) => unknown>> = {
  keys: (values) => values.map((key, i) => ({ key, name: `cli-${i + 1}`, scopes: ALL_SCOPES })),
  allowedHosts: (values) => values,
};

const NBSP = '\u00a0';
const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
/** `a, b or c`. */
const choices = (values: readonly unknown[]) =>
  values.length > 1 ? `${values.slice(0, -1).map(show).join(', ')} or ${show(values.at(-1))}` : show(values[0]);

const num = (flag: string, v: string, words: readonly unknown[]) => {
  if (!/^\d+(\.\d+)?$/.test(v))
    throw new ConfigError(`--${flag} must be a number${words.length ? ` or ${choices(words)}` : ''}, got '${v}'`);
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
    return num(
      flag.name,
      raw,
      branches.flatMap((b) => (typeof b.const === 'string' ? [b.const] : [])),
    );
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

const GROUPS: Readonly<Record<NonNullable<SettingSchema['x-group']>, string>> = {
  server: 'Server',
  access: 'Keys and the admin API',
  answers: 'Answers',
  timing: 'Timing and latency',
  relay: 'A real upstream: proxy, record, replay',
};

/** The values a flag takes, where the schema or the catalogue lists them. */
function valuesOf(f: Flag): readonly unknown[] | undefined {
  // The latency profiles are the catalogue's, with the two words that are not a profile's name.
  if (dotted(f) === 'latency.profile')
    return ['off', 'catalogue', ...new Catalogue(SchemaRegistry.shared()).profiles.keys()];
  return f.setting.schema.enum;
}

/** The help of `serve`, written from schemas/config.json: one sentence per flag, its values and default. */
export function serveHelp(): string {
  const WIDTH = 100;
  const sentence = (f: Flag) => {
    const s = f.setting.schema;
    const values = valuesOf(f);
    const given = s.default !== undefined && !isSwitch(f) && !(Array.isArray(s.default) && !s.default.length);
    return [
      s['x-help'] ?? '',
      values ? `: ${choices(values)}` : '',
      isList(f) ? ' (repeatable)' : '',
      // The default is kept on one line: no-break spaces until the text is wrapped.
      given ? ` (default:${NBSP}${show(s.default)})` : '',
    ].join('');
  };
  const rows: [group: string, usage: string, text: string][] = [
    ['Server', '--config FILE', 'a JSON file of settings, checked at start-up'],
    ...FLAGS.map(
      (f) => [GROUPS[f.setting.schema['x-group'] ?? 'server'], f.usage, sentence(f)] as [string, string, string],
    ),
    ['', '-h, --help', 'show this help'],
    ['', '-v, --version', 'print the version'],
  ];
  const column = Math.max(...rows.map(([, usage]) => usage.length)) + 4;
  const indent = ' '.repeat(column);
  const sections = [...new Set(rows.map(([group]) => group))].map((group) => {
    const lines = rows
      .filter(([g]) => g === group)
      .map(
        ([, usage, text]) => `  ${usage.padEnd(column - 2)}${wrap(text, WIDTH - column, indent).replaceAll(NBSP, ' ')}`,
      );
    return `${group || 'Other'}:\n${lines.join('\n')}`;
  });
  return `Usage: unified-ai-mock serve [options]

Serves the mock of the Unified AI Model Service API.

${sections.join('\n\n')}

Every flag is also a key of the --config file; each flag and key in full: docs/configuration.md.
`;
}

/** How `serve` was asked to run: its configuration, or help or version. */
type ServeRequest = ConfigInput | 'help' | 'version';

/** Where a configuration's settings came from: the flag of each, as the user wrote it, by the setting's dotted path;
 * the others from the file. */
const WRITTEN = new WeakMap<ConfigInput, { readonly flags: ReadonlyMap<string, string>; readonly file?: string }>();

/** The lines of a configuration problem found after start-up's schema check (a latency profile the catalogue lacks,
 * ...) that name a setting a flag set, named by that flag instead. */
function inFlagTerms(message: string, input: ConfigInput): string {
  const source = WRITTEN.get(input);
  if (!source) return message;
  return message.replace(/^ {2}([\w.[\]]+):/gm, (line, path: string) => {
    const dotted = path.replace(/\[(\d+)\]/g, '.$1');
    const flag = [...source.flags].find(([at]) => dotted === at || dotted.startsWith(`${at}.`))?.[1];
    return flag ? `  ${flag}:` : source.file ? `  ${path} in ${source.file}:` : line;
  });
}

/** Turns command-line flags into configuration, over the config file's values; checks it and names what the user
 * wrote (the flag, or the file's key) in every problem. */
export function serveConfig(argv: string[], io: Io = processIo): ServeRequest {
  const parsed = parseCommandLine({
    args: argv,
    strict: true,
    options: {
      config: { type: 'string' },
      ...COMMON_OPTIONS,
      ...Object.fromEntries(
        FLAGS.map(
          (f) =>
            [
              f.name,
              {
                ...(isSwitch(f) ? { type: 'boolean' } : { type: 'string', multiple: isList(f) }),
                ...(f.setting.schema['x-short'] ? { short: f.setting.schema['x-short'].slice(1) } : {}),
              },
            ] as const,
        ),
      ),
      ...Object.fromEntries(Object.keys(DEPRECATED).map((old) => [old, { type: 'string' }] as const)),
    },
  });
  const values = parsed.values as Record<string, string | boolean | (string | boolean)[] | undefined>;
  if (values.help) return 'help';
  if (values.version) return 'version';
  for (const [old, now] of Object.entries(DEPRECATED)) {
    if (values[old] === undefined) continue;
    commandWarning(io, `--${old} is deprecated and will be removed: write --${now}`);
    values[now] ??= values[old];
  }
  const file = typeof values.config === 'string' ? values.config : undefined;
  let input: ConfigInput = file ? readConfigFile(file) : {};
  // A key in a file ends up in a repository sooner or later: the upstream key comes from the flag or the environment.
  if (input.upstreamKey !== undefined)
    throw new ConfigError(
      `upstreamKey in ${file}: not allowed in a file; use --upstream-key KEY or the UPSTREAM_API_KEY environment variable`,
    );
  // The flag each setting came from, as the user wrote it: `--api-key 'bad key'` (an element of a list by its index).
  const written = new Map<string, string>();
  for (const f of FLAGS) {
    const raw = values[f.name];
    if (raw === undefined) continue;
    input = withValue(input, f.setting.path, fromFlag(f, raw)) as ConfigInput;
    const quoted = (v: string | boolean) => (typeof v === 'boolean' ? `--${f.name}` : `--${f.name} '${v}'`);
    if (Array.isArray(raw)) raw.forEach((v, i) => written.set(`${dotted(f)}.${i}`, quoted(v)));
    else written.set(dotted(f), quoted(raw));
  }
  WRITTEN.set(input, { flags: written, file });
  checkConfig(input, SchemaRegistry.shared(), {
    file,
    flagAt: (path) => {
      for (let n = path.length; n > 0; n--) {
        const flag = written.get(path.slice(0, n).join('.'));
        if (flag) return flag;
      }
      return undefined;
    },
  });
  return input;
}

async function serve(argv: string[]): Promise<number> {
  const input = serveConfig(argv);
  if (input === 'help' || input === 'version') {
    process.stdout.write(input === 'help' ? serveHelp() : versionText());
    return 0;
  }
  let mock: Awaited<ReturnType<typeof start>>;
  try {
    mock = await start(input, { log: true, warmPath: true });
  } catch (err) {
    throw err instanceof ConfigError ? new ConfigError(inFlagTerms(err.message, input)) : err;
  }
  const keys = mock.config.keys.map((k) => {
    const limit = k.rateLimit
      ? ` (rate limit: ${k.rateLimit.requests} requests per ${windowMsOf(k.rateLimit) / 1000} s)`
      : '';
    // The default keys are public fixtures and printed whole; keys given by the user are masked.
    const shown = input.keys ? maskKey(k.key) : k.key;
    return `  ${shown}${input.keys && k.name ? ` (${k.name})` : ''}${limit}`;
  });
  const { proxy, record, replay } = mock.config;
  // The upstream's URL is shown without any user:password part; its key never is.
  const relay = proxy
    ? `proxying to ${proxy.replace(/\/\/[^@/]*@/, '//')}${record ? `, recording into ${record}` : ''}\n`
    : replay
      ? `replaying the cassettes of ${replay}\n`
      : '';
  const at = addressesOf(mock.url);
  const where = [
    ['OpenAI SDK baseURL', at.openaiBaseURL],
    ['Inspector', `${at.inspectorURL}${mock.config.adminToken ? ' (sign in with ?token=ADMIN_TOKEN)' : ''}`],
    ...(mock.config.metrics === 'off' ? [] : [['Metrics', at.metricsURL]]),
  ].map(([name, url]) => `${`${name}:`.padEnd(20)}${url}`);
  process.stdout.write(
    `unified-ai-mock ${versionText().trim()} listening on ${mock.url}\n${relay}API keys:\n${keys.join('\n')}\n${where.join('\n')}\n`,
  );
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

/** A port another program holds, or one this user may not bind: what happened and what to do instead. */
function listenProblem(e: Error & { code?: string; port?: number; address?: string }): string {
  const where = e.port !== undefined ? `port ${e.port}${e.address ? ` on ${e.address}` : ''}` : 'the port';
  return e.code === 'EADDRINUSE'
    ? `${where} is in use (another mock, or Prism, whose default port is 4010 too): choose another with -p PORT, or -p 0 for a free one`
    : `${where} may not be used by this user (ports below 1024 need privileges): choose another with -p PORT, or -p 0 for a free one`;
}

/** Runs the command line; resolves to the exit code, or -1 while a server keeps running. */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const [command, ...rest] = argv;
  const named = command !== undefined && !command.startsWith('-') ? command : 'serve';
  try {
    if (command === '--help' || command === '-h' || command === 'help') {
      io.stdout(HELP);
      return 0;
    }
    if (command === '--version' || command === '-v') {
      io.stdout(versionText());
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
    if (command === 'openapi') return await (await import('./openapi.js')).openapi(rest);
    const meant = closest(command, Object.keys(COMMANDS));
    io.stderr(
      `${PREFIX}unknown command '${command}'${meant ? `; did you mean '${meant}'?` : ''}\nRun 'unified-ai-mock --help' for the commands.\n`,
    );
    return 2;
  } catch (err) {
    const e = err as Error & { code?: string };
    if (isUsageError(err)) return usageFailure(io, named, e.message);
    if (err instanceof ConfigError) return commandError(io, named, e.message);
    if (e.code === 'EADDRINUSE' || e.code === 'EACCES') return commandError(io, named, listenProblem(e));
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
  // A reader that stops early (`openapi | head`) closes the pipe: the program ends quietly, as `cat` would.
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      process.exit(0);
    });
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
