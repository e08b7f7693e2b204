#!/usr/bin/env node
import './heapTuning.js'; // first: V8 settings apply to everything the process allocates after it
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, defaultKeys, readConfigFile, type ConfigInput } from '../domain/config.js';
import { maskKey } from '../domain/keys.js';
import { flushLogger } from '../server/logger.js';
import { start } from '../server/server.js';

const SERVE_HELP = `Usage: unified-ai-mock serve [options]

Serves the mock of the Unified AI Model Service API.

Options (each also settable in the --config file under the name in brackets):
  --port N               port to listen on; 0 picks a free one            [port]      default 4010
  --host HOST            address to bind                                  [host]      default 127.0.0.1
  --api-key KEY          accept this key; repeat for more; replaces the default keys   [keys]
  --config FILE          JSON configuration file (checked at start-up; exit 2 when invalid)
  --strict               unknown body fields become a 400                 [strict]    default off
  --no-fault-headers     ignore all control headers (Prefer, X-Mock-*)    [faultHeaders]
  --admin-token TOKEN    token for the /__admin API (needed off loopback) [adminToken]
  --clock SECONDS|system fixed 'created' time, or the wall clock          [clock]     default 1767225600
  --public-url URL       base URL used in media links                     [publicUrl]
  --reply-rules FILE     your chat reply rules, tried before the built-in ones  [replyRules]
  --ttft MS              stream delay before the first chunk              [pacing.timeToFirstTokenMs]
  --tps N                streamed tokens per second (0 = no pacing)       [pacing.tokensPerSecond]
  --body-limit BYTES     largest request body                             [bodyLimit] default 20971520
  --log-level LEVEL      fatal|error|warn|info|debug|trace|silent         [logLevel]  default info
  --help                 show this help
`;

const HELP = `Usage: unified-ai-mock <command> [options]

Commands:
  serve          run the mock server (default)
  conformance    check an implementation of the API against the suite
  openapi        print the OpenAPI 3.1 document (unified-ai-mock openapi > openapi.json)

Run 'unified-ai-mock <command> --help' for the options of a command.
`;

// Keys given with --api-key may call every endpoint, like the default keys.
const ALL_SCOPES = defaultKeys()[0]?.scopes ?? [];

/** Turns command-line flags into configuration, over the config file's values. */
export function serveConfig(argv: string[]): ConfigInput | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'api-key': { type: 'string', multiple: true },
      config: { type: 'string' },
      strict: { type: 'boolean' },
      'no-fault-headers': { type: 'boolean' },
      'admin-token': { type: 'string' },
      clock: { type: 'string' },
      'public-url': { type: 'string' },
      'reply-rules': { type: 'string' },
      ttft: { type: 'string' },
      tps: { type: 'string' },
      'body-limit': { type: 'string' },
      'log-level': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) return 'help';
  const input: ConfigInput = values.config ? readConfigFile(values.config) : {};
  const num = (flag: string, v: string) => {
    if (!/^\d+(\.\d+)?$/.test(v)) throw new ConfigError(`--${flag} must be a number, got '${v}'`);
    return Number(v);
  };
  if (values.port !== undefined) input.port = num('port', values.port);
  if (values.host !== undefined) input.host = values.host;
  if (values['api-key']) input.keys = values['api-key'].map((key, i) => ({ key, label: `cli-${i + 1}`, scopes: ALL_SCOPES }));
  if (values.strict) input.strict = true;
  if (values['no-fault-headers']) input.faultHeaders = false;
  if (values['admin-token'] !== undefined) input.adminToken = values['admin-token'];
  if (values.clock !== undefined) input.clock = values.clock === 'system' ? 'system' : num('clock', values.clock);
  if (values['public-url'] !== undefined) input.publicUrl = values['public-url'];
  if (values['reply-rules'] !== undefined) input.replyRules = values['reply-rules'];
  if (values.ttft !== undefined) input.pacing = { ...input.pacing, timeToFirstTokenMs: num('ttft', values.ttft) };
  if (values.tps !== undefined) input.pacing = { ...input.pacing, tokensPerSecond: num('tps', values.tps) };
  if (values['body-limit'] !== undefined) input.bodyLimit = num('body-limit', values['body-limit']);
  if (values['log-level'] !== undefined) input.logLevel = values['log-level'] as ConfigInput['logLevel'];
  return input;
}

async function serve(argv: string[]): Promise<number> {
  const input = serveConfig(argv);
  if (input === 'help') {
    process.stdout.write(SERVE_HELP);
    return 0;
  }
  const mock = await start(input, { log: true });
  const keys = mock.config.keys.map((k) => {
    const limit = k.rateLimit ? ` (rate limit: ${k.rateLimit.requests} requests per ${(k.rateLimit.windowMs ?? 60_000) / 1000} s)` : '';
    // The default keys are public fixtures and printed whole; keys given by the user are masked.
    const shown = input.keys ? maskKey(k.key) : k.key;
    return `  ${shown}${input.keys && k.label ? ` (${k.label})` : ''}${limit}`;
  });
  process.stdout.write(`unified-ai-mock listening on ${mock.url}\nAPI keys:\n${keys.join('\n')}\n`);
  // SIGTERM or SIGINT: stop accepting, let requests and streams finish within the grace period, exit 0.
  // A second signal exits at once with 128 + the signal number (130 for SIGINT, 143 for SIGTERM).
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(signal === 'SIGINT' ? 130 : 143);
    stopping = true;
    mock.logger?.info({ signal, graceMs: mock.config.timeouts.shutdownGraceMs }, 'shutting down');
    void mock.shutdown().then(() => flushLogger(mock.logger)).then(() => process.exit(0));
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
    if (command === 'conformance') return await (await import('../tools/conformance/cli.js')).conformance(rest);
    if (command === 'openapi') return await (await import('../tools/openapi/cli.js')).openapi(rest);
    process.stderr.write(`unknown command '${command}'\n\n${HELP}`);
    return 2;
  } catch (err) {
    const e = err as Error & { code?: string };
    if (err instanceof ConfigError || e.code?.startsWith('ERR_PARSE_ARGS') || e.code === 'EADDRINUSE' || e.code === 'EACCES') {
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
  if (code >= 0) process.exit(code);
}
