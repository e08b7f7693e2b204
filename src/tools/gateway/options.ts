// The command line of `unified-ai-mock conformance --profile gateway`: the runner's own options (target, selection,
// reports, baseline) read by the runner's parser, and the gateway profile's (the upstream, what the gateway is
// documented to do, the bounds) taken out of the arguments first.
import { parseArgs } from 'node:util';
import type { Catalogue } from '../../domain/catalogue.js';
import { parseConformanceArgs, type ConformanceOptions } from '../conformance/options.js';
import { listValues, UsageError } from '../../verdict/commandLine.js';

/** The defaults of the gateway profile's options (docs/gateway.md says why each). */
const GATEWAY_DEFAULTS = {
  gatewayTimeoutMs: 30_000,
  firstEventBoundMs: 500,
  upstreamGapMs: 1_000,
  streams: 4,
  host: '127.0.0.1',
} as const;

/** The most concurrent streams the isolation case sends: enough to mix, few enough to stay cheap. */
const MAX_STREAMS = 16;

/** The upstream: a mock the runner starts (on a port the gateway is configured with), or one already running. */
type UpstreamChoice =
  | { readonly start: { readonly port: number; readonly host: string } }
  | { readonly admin: string; readonly adminToken?: string };

/** Everything `conformance --profile gateway` was asked to do. */
export interface GatewayOptions {
  /** The runner's options: --base-url (the gateway), --api-key (the client's key), --route, --header, --only, ... */
  readonly conformance: ConformanceOptions;
  /** Absent only with --plan. */
  readonly upstream?: UpstreamChoice;
  /** The keys the gateway sends upstream (--upstream-key); empty: the mock's default keys. */
  readonly upstreamKeys: readonly string[];
  readonly keyPassthrough: boolean;
  readonly modelAliases: Readonly<Record<string, string>>;
  readonly rewrites: readonly string[];
  readonly gatewayTimeoutMs: number;
  readonly firstEventBoundMs: number;
  readonly upstreamGapMs: number;
  readonly streams: number;
}

const S = { type: 'string' } as const;
const M = { type: 'string', multiple: true } as const;
const B = { type: 'boolean' } as const;

const OPTIONS = {
  profile: S,
  'upstream-port': S,
  'upstream-host': S,
  'upstream-admin': S,
  'upstream-admin-token': S,
  'upstream-key': M,
  'key-passthrough': B,
  'model-alias': M,
  rewrites: M,
  'gateway-timeout': S,
  'first-event-bound': S,
  'upstream-gap': S,
  streams: S,
} as const;

/** Whether the arguments ask for the gateway profile (`--profile gateway` or `--profile=gateway`). */
export function asksForGateway(argv: readonly string[]): boolean {
  return argv.some((a, i) => a === '--profile=gateway' || (a === '--profile' && argv[i + 1] === 'gateway'));
}

function whole(flag: string, value: string | undefined, fallback: number, min: number, max = 2_147_483_647): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}, got '${value}'`);
  return Number(value);
}

/**
 * Reads the gateway profile's command line; 'help' for --help. The gateway profile's own options are taken out first
 * (each with its value), and the rest go to the runner's parser, so every option of the runner means the same here.
 * Throws UsageError on a mistake.
 */
export function parseGatewayArgs(
  argv: readonly string[],
  catalogue: Catalogue,
  env: NodeJS.ProcessEnv = process.env,
): GatewayOptions | 'help' | 'version' {
  const { values: v, tokens } = parseArgs({
    args: [...argv],
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const taken = new Set<number>();
  for (const t of tokens) {
    if (t.kind !== 'option' || !(t.name in OPTIONS)) continue;
    const type = OPTIONS[t.name as keyof typeof OPTIONS].type;
    if (type === 'string' && t.value === undefined) throw new UsageError(`--${t.name} needs a value`);
    taken.add(t.index);
    if (type === 'string' && !t.inlineValue) taken.add(t.index + 1);
  }
  if (v.profile !== 'gateway')
    throw new UsageError(`--profile must be one of documented, full, gateway, got '${String(v.profile)}'`);
  const conformance = parseConformanceArgs(
    argv.filter((_, i) => !taken.has(i)),
    catalogue,
    env,
  );
  if (conformance === 'help' || conformance === 'version') return conformance;
  const str = (name: keyof typeof OPTIONS) => v[name] as string | undefined;
  const port = str('upstream-port');
  const admin = str('upstream-admin');
  const adminToken = str('upstream-admin-token') ?? env.CONFORMANCE_UPSTREAM_ADMIN_TOKEN;
  if (port !== undefined && admin !== undefined)
    throw new UsageError(
      'give the upstream either by --upstream-port (the runner starts it) or by --upstream-admin (one already running), not both',
    );
  if (port === undefined && admin === undefined && !conformance.plan)
    throw new UsageError(
      '--profile gateway needs the upstream the gateway is configured with: --upstream-port PORT (the runner starts the mock there) or --upstream-admin URL (a mock already running)',
    );
  if (admin !== undefined && !/^https?:\/\/[^/]/.test(admin))
    throw new UsageError(`--upstream-admin must be the mock's http or https URL, got '${admin}'`);
  if (str('upstream-admin-token') !== undefined && admin === undefined)
    throw new UsageError('--upstream-admin-token needs --upstream-admin');
  if (str('upstream-host') !== undefined && port === undefined)
    throw new UsageError('--upstream-host needs --upstream-port');
  const host = str('upstream-host') ?? GATEWAY_DEFAULTS.host;
  if (!/^[\w.:[\]-]+$/.test(host))
    throw new UsageError(`--upstream-host must be a host name or address, got '${host}'`);
  const modelAliases: Record<string, string> = {};
  for (const pair of listValues(v['model-alias'] as string[] | undefined)) {
    const [from, to, ...more] = pair.split('=');
    if (!from || !to || more.length)
      throw new UsageError(
        `--model-alias must be CLIENT=UPSTREAM (the model the client names and the one the upstream gets), got '${pair}'`,
      );
    modelAliases[from] = to;
  }
  const rewrites = listValues(v.rewrites as string[] | undefined);
  for (const field of rewrites)
    if (!/^[A-Za-z_][\w]*$/.test(field))
      throw new UsageError(`--rewrites takes a request field's name (e.g. temperature), got '${field}'`);
  const gatewayTimeoutMs = whole(
    'gateway-timeout',
    str('gateway-timeout'),
    GATEWAY_DEFAULTS.gatewayTimeoutMs,
    1,
    600_000,
  );
  // The paced stream lasts two gaps, which a gateway with a short timeout must let through: the defaults shrink to fit.
  const upstreamGapMs = whole(
    'upstream-gap',
    str('upstream-gap'),
    Math.min(GATEWAY_DEFAULTS.upstreamGapMs, Math.floor(gatewayTimeoutMs / 3)),
    1,
    60_000,
  );
  const firstEventBoundMs = whole(
    'first-event-bound',
    str('first-event-bound'),
    Math.min(GATEWAY_DEFAULTS.firstEventBoundMs, Math.floor(upstreamGapMs / 2)),
    1,
  );
  // Buffering shows as the first event held for the whole stream, two gaps: a bound near one gap could not tell.
  if (upstreamGapMs < 2 * firstEventBoundMs)
    throw new UsageError(
      `--upstream-gap (${upstreamGapMs} ms) must be at least twice --first-event-bound (${firstEventBoundMs} ms), so that a buffered stream cannot pass for a slow one`,
    );
  if (2 * upstreamGapMs >= gatewayTimeoutMs)
    throw new UsageError(
      `the paced stream lasts two --upstream-gap (${2 * upstreamGapMs} ms), which must be shorter than --gateway-timeout (${gatewayTimeoutMs} ms): a faithful gateway would time it out`,
    );
  return {
    conformance,
    ...(port !== undefined
      ? { upstream: { start: { port: whole('upstream-port', port, 0, 0, 65_535), host } } }
      : admin !== undefined
        ? { upstream: { admin, ...(adminToken ? { adminToken } : {}) } }
        : {}),
    upstreamKeys: (v['upstream-key'] as string[] | undefined) ?? [],
    keyPassthrough: v['key-passthrough'] === true,
    modelAliases,
    rewrites,
    gatewayTimeoutMs,
    firstEventBoundMs,
    upstreamGapMs,
    streams: whole('streams', str('streams'), GATEWAY_DEFAULTS.streams, 2, MAX_STREAMS),
  };
}

/** The help of the gateway profile: its own options; the runner's are in `conformance --help`. */
export const gatewayHelp =
  (): string => `Usage: unified-ai-mock conformance --profile gateway --base-url GATEWAY --api-key KEY
         (--upstream-port PORT | --upstream-admin URL) [options]

Checks a gateway from both ends: the runner is the gateway's client, and the mock is its upstream
(started by the runner on the port the gateway is configured with, or one already running). Each
case marks its requests with a token in the prompt, sets the upstream's faults and pacing for it,
and compares what the client got with what reached the upstream (its journal): parameters
forwarded, errors relayed (400, 401, 429 with retry-after, 500, 503, a broken body), streams
(events, first event, pacing, a cut, concurrent streams), a hung upstream, retries, the key.
A must case is a rule of the API document; a should case is gateway practice (a warning, a
failure with --strict). Exit code: 0 no case failed, 1 a case failed, 2 bad usage, or the
gateway or upstream unreachable.

Upstream:
  --upstream-port PORT    start the mock on this port for the run (the gateway's upstream URL)
  --upstream-host HOST    the address it listens on (default: ${GATEWAY_DEFAULTS.host})
  --upstream-admin URL    use a mock already running at URL instead (its /__admin API must answer
                          the runner: loopback, or --upstream-admin-token)
  --upstream-admin-token TOKEN  that mock's --admin-token (or CONFORMANCE_UPSTREAM_ADMIN_TOKEN)
  --upstream-key KEY      a key the gateway sends upstream; the mock the runner starts accepts it
                          (repeatable) (default: the mock's own keys)

What the gateway is documented to do:
  --key-passthrough       it sends the client's own key upstream (then gateway.secrets.key does
                          not apply)
  --model-alias C=U       it sends model U upstream when the client names model C (repeatable)
  --rewrites FIELD        it changes this request field on the way: not compared (repeatable)
  --gateway-timeout MS    its timeout for a hung upstream (default: ${GATEWAY_DEFAULTS.gatewayTimeoutMs})

Bounds:
  --first-event-bound MS  how much later than the upstream wrote an event the client may read it
                          (default: ${GATEWAY_DEFAULTS.firstEventBoundMs}, or half the gap when that is less)
  --upstream-gap MS       the gap between the paced upstream's events: at least twice the bound,
                          two of them shorter than the gateway's timeout
                          (default: ${GATEWAY_DEFAULTS.upstreamGapMs}, or a third of --gateway-timeout when less)
  --streams N             concurrent streams of the isolation case, 2-${MAX_STREAMS} (default: ${GATEWAY_DEFAULTS.streams})

  -h, --help              show this help
  -v, --version           print the version

The runner's options apply as in the other profiles: --base-url (the gateway), --api-key (the
client's key), --path-prefix, --route, --header, --timeout, --concurrency, --only, --skip,
--unsupported, --strict, --plan, --baseline, --reporter, --output, --chat-model and the other
models ('unified-ai-mock conformance --help').

Every option in full, with recipes for Portkey and for a gateway set by a base URL: docs/gateway.md.
`;
