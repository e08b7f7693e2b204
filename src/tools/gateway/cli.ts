// `unified-ai-mock conformance --profile gateway`: the runner as a gateway's client, the mock as its upstream.
import { randomBytes } from 'node:crypto';
import { SchemaRegistry } from '../../contract/schemas.js';
import { Catalogue } from '../../domain/catalogue.js';
import { defaultKeys, type KeyConfig } from '../../domain/config.js';
import {
  commandError,
  commandWarning,
  EXIT,
  processIo,
  parsedOrExit,
  usageFailure,
  type Io,
} from '../../verdict/commandLine.js';
import { summarize, type RunInfo } from '../../verdict/report.js';
import { openReporters } from '../../verdict/reporterChoice.js';
import { REPORTERS } from '../conformance/cli.js';
import { routesByPath, secretHeaderValues } from '../conformance/gateway.js';
import { send, type Target } from '../conformance/http.js';
import { runSecrets } from '../conformance/run.js';
import { matches } from '../conformance/select.js';
import { operationBases } from '../conformance/suite.js';
import { gatewayCases, type GatewayCase, type ProbeRequest } from './cases.js';
import { parseGatewayArgs, gatewayHelp, type GatewayOptions } from './options.js';
import { renderGatewayPlan } from './plan.js';
import { HANG_MARGIN_MS, outgoing, retoken } from './probe.js';
import { runGateway } from './run.js';
import { AdminError, JournalWatch, Upstream, type StartUpstream } from './upstream.js';
import { answered } from './judging.js';

const COMMAND = 'conformance';

/** What the gateway profile is given by whoever runs it: how to start a mock (src/cli passes startMockServer). */
interface GatewayDeps {
  readonly startUpstream?: StartUpstream;
}

/** How long past the gateway's timeout the runner still waits for its error: a quarter of it, at least a second. */
const hangGraceMs = (gatewayTimeoutMs: number): number => Math.max(1_000, Math.round(gatewayTimeoutMs / 4));

/** How long the preflight request may take to show in the upstream's journal. */
const PREFLIGHT_JOURNAL_MS = 3_000;

/** The cases --only and --skip leave; a pattern or --unsupported name that matches nothing is a usage error. */
function selectGatewayCases(all: readonly GatewayCase[], o: GatewayOptions['conformance']): GatewayCase[] {
  for (const [flag, patterns] of [
    ['only', o.only],
    ['skip', o.skip],
  ] as const)
    for (const p of patterns)
      if (!all.some((gc) => matches(gc.case, p)))
        throw new Error(`--${flag} '${p}' matches no case of the gateway profile`);
  // Every documented operation is a name here (a recipe of the other profiles says --unsupported me), and every tag.
  const names = new Set([...all.flatMap((gc) => [gc.case.operation, ...gc.case.tags]), 'me']);
  for (const u of o.unsupported)
    if (!names.has(u)) throw new Error(`--unsupported '${u}' is neither an operation nor a tag of the gateway profile`);
  return all.filter(
    (gc) => (!o.only.length || o.only.some((p) => matches(gc.case, p))) && !o.skip.some((p) => matches(gc.case, p)),
  );
}

/** The chat model's output limit, as the catalogue has it (a model it does not list has none here). */
function maxOutput(catalogue: Catalogue, model: string): { maxOutputTokens?: number } {
  const limit = catalogue.ofKind('text').find((m) => m.id === model)?.limits.max_output_tokens;
  return limit === undefined ? {} : { maxOutputTokens: limit };
}

/** The keys the mock the runner starts accepts: its defaults, the gateway's upstream keys, the client's key. */
function upstreamKeyConfigs(clientKey: string, upstreamKeys: readonly string[]): KeyConfig[] {
  const defaults = defaultKeys();
  const scopes = defaults[0]?.scopes ?? [];
  const keys: KeyConfig[] = [...defaults];
  // The client's key too, so that a gateway that passes it through is served, and the journal names it.
  const more = [
    ...upstreamKeys.map((key, i) => [key, `gateway-upstream-${i + 1}`] as const),
    [clientKey, 'gateway-client'] as const,
  ];
  for (const [key, label] of more) if (!keys.some((k) => k.key === key)) keys.push({ key, label, scopes });
  return keys;
}

/** The upstream of the run: a mock started for it, or one already running; throws when it cannot be had. */
async function openUpstream(options: GatewayOptions, deps: GatewayDeps, hangWaitMs: number): Promise<Upstream> {
  const choice = options.upstream!;
  if ('admin' in choice) {
    const upstream = new Upstream(choice.admin, choice.adminToken);
    await upstream.check();
    return upstream;
  }
  if (!deps.startUpstream)
    throw new Error('this entry point cannot start a mock: run one and pass --upstream-admin URL');
  const mock = await deps.startUpstream({
    port: choice.start.port,
    host: choice.start.host,
    keys: upstreamKeyConfigs(options.conformance.apiKey!, options.upstreamKeys),
    // A hung upstream holds its answer past the runner's wait, so that only the gateway can end it.
    timeouts: { stallMaxMs: Math.max(60_000, hangWaitMs + HANG_MARGIN_MS) },
  });
  // A mock listening on every address is steered on loopback: its admin API answers loopback names only.
  const url = new URL(mock.url);
  if (['0.0.0.0', '[::]', '::'].includes(url.hostname)) url.hostname = '127.0.0.1';
  return new Upstream(url.origin, undefined, mock);
}

/**
 * Sends one plain request of the primary operation through the gateway and looks for it in the upstream's journal:
 * the gateway must be reachable and forward to this upstream before any case can say anything. Resolves to why not, or
 * to a warning (the upstream refused the gateway's key), or to nothing.
 */
async function preflight(
  request: ProbeRequest | undefined,
  target: Target,
  upstream: Upstream,
  journal: JournalWatch,
): Promise<{ error?: string; warning?: string }> {
  if (!request) return {};
  const req = retoken(request, 'p');
  const token = req.token;
  const ex = await send(target, outgoing(req));
  if (ex.error && ex.status === 0) return { error: `cannot reach ${target.baseUrl}: ${ex.error}` };
  const seen = await journal.entries(token, { maxMs: PREFLIGHT_JOURNAL_MS });
  if (!seen.length)
    return {
      error:
        `the gateway at ${target.baseUrl} did not forward a ${req.operation} request to the upstream at ${upstream.url} ` +
        `(the gateway answered ${answered({ ex, waitedOut: false, waitMs: target.timeoutMs })}); point the gateway at the upstream, or pass --route, --header (docs/gateway.md)`,
    };
  if (seen[0]!.status === 401)
    return {
      warning: `the upstream refused the key the gateway sent (401): give it with --upstream-key KEY (or --key-passthrough if the gateway sends the client's key); cases that need the upstream's answer will fail`,
    };
  return {};
}

/** `unified-ai-mock conformance --profile gateway`: resolves to the exit code (0 no failure, 1 a failure, 2 usage or
 * unreachable). */
export async function gatewayConformance(argv: string[], deps: GatewayDeps = {}, io: Io = processIo): Promise<number> {
  const registry = SchemaRegistry.shared();
  const catalogue = new Catalogue(registry);
  const options = parsedOrExit(
    io,
    COMMAND,
    () => parseGatewayArgs(argv, catalogue, io.env ?? process.env),
    gatewayHelp,
  );
  if (typeof options === 'number') return options;
  const c = options.conformance;
  const run = randomBytes(3).toString('hex');
  const { cases: all, probes } = gatewayCases({
    bases: operationBases(registry, c.values),
    values: c.values,
    run,
    streams: options.streams,
    ...maxOutput(catalogue, c.values.chatModel),
  });
  let cases: GatewayCase[];
  try {
    cases = selectGatewayCases(all, c);
  } catch (err) {
    return usageFailure(io, COMMAND, (err as Error).message);
  }
  const unsupported = new Set(c.unsupported);
  const hangWaitMs = options.gatewayTimeoutMs + hangGraceMs(options.gatewayTimeoutMs);
  if (c.plan) {
    io.stdout(renderGatewayPlan(cases, probes, options, unsupported, hangWaitMs));
    return EXIT.ok;
  }
  let upstream: Upstream;
  try {
    upstream = await openUpstream(options, deps, hangWaitMs);
  } catch (err) {
    const what =
      'admin' in options.upstream!
        ? `reach the upstream's admin API at ${options.upstream.admin}`
        : 'start the upstream';
    return commandError(
      io,
      COMMAND,
      `cannot ${what}: ${err instanceof AdminError ? err.message : (err as Error).message}`,
    );
  }
  try {
    const target: Target = {
      baseUrl: c.baseUrl!,
      apiKey: c.apiKey!,
      pathPrefix: c.pathPrefix,
      timeoutMs: c.timeoutMs,
      unknownKey: '',
      maxBodyBytes: c.maxBodyBytes,
      routes: routesByPath(c.routes),
      headers: c.headers,
      headerSecrets: secretHeaderValues(c.headers, c.apiKey!),
    };
    const baseline: Target | undefined = c.baseline && {
      ...target,
      baseUrl: c.baseline.url,
      apiKey: c.baseline.apiKey,
    };
    const journal = new JournalWatch(upstream);
    const carried = cases.filter((gc) => !unsupported.has(gc.case.operation));
    const primary =
      carried.find((gc) => gc.case.id === 'gateway.forward.chat') ?? carried.find((gc) => gc.judge === 'forward');
    const plain = primary && probes.get(primary.probes[0]!)!.requests[0];
    for (const gateway of [target, ...(baseline ? [baseline] : [])]) {
      const checked = await preflight(plain, gateway, upstream, journal);
      if (checked.error) return commandError(io, COMMAND, checked.error);
      if (checked.warning) commandWarning(io, checked.warning);
    }
    const upstreamKeys = options.upstreamKeys.length ? options.upstreamKeys : defaultKeys().map((k) => k.key);
    const secrets = [
      ...runSecrets({ ...target, ...(baseline ? { baseline } : {}) }),
      ...options.upstreamKeys,
      ...('admin' in options.upstream! && options.upstream.adminToken ? [options.upstream.adminToken] : []),
    ];
    const reporters = openReporters(c.reporters, REPORTERS, io.stdout);
    const info: RunInfo = {
      target: target.baseUrl,
      profile: 'gateway',
      cases: cases.map((gc) => gc.case),
      upstream: `${upstream.url}${upstream.started ? ' (started for the run)' : ''}`,
      ...(baseline ? { baseline: baseline.baseUrl } : {}),
    };
    reporters.start(info);
    const started = performance.now();
    let done = 0;
    const results = await runGateway(
      cases,
      probes,
      {
        target,
        ...(baseline ? { baseline } : {}),
        upstream,
        journal,
        hangWaitMs,
        concurrency: c.concurrency,
        upstreamGapMs: options.upstreamGapMs,
        unsupported,
        shouldWarns: !c.strict,
        secrets,
        judge: {
          registry,
          clientKey: c.apiKey!,
          upstreamKeys,
          keyPassthrough: options.keyPassthrough,
          modelAliases: options.modelAliases,
          rewrites: options.rewrites,
          firstEventBoundMs: options.firstEventBoundMs,
          gatewayTimeoutMs: options.gatewayTimeoutMs,
          upstreamBody: (e) => upstream.responseBody(e.requestId),
        },
      },
      (r) => reporters.result(r, ++done, cases.length),
    );
    const code = reporters.finish({
      info,
      results,
      summary: summarize(results, Math.round(performance.now() - started)),
    });
    const departed = results.some((r) => r.departures?.length);
    return departed && !c.baseline?.reportOnly ? EXIT.failed : code;
  } finally {
    await upstream.close();
  }
}
