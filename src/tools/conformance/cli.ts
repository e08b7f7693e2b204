import { Catalogue } from '../../domain/catalogue.js';
import { operations } from '../../contract/operations.js';
import { routesByPath, secretHeaderValues } from './gateway.js';
import { SchemaRegistry, schemaId } from '../../contract/schemas.js';
import { mediaAllowsPrivate } from './addresses.js';
import { checksFor } from '../../verdict/checks.js';
import { commandError, commandWarning, EXIT, processIo, parsedOrExit, type Io } from '../../verdict/commandLine.js';
import { send, type Target } from './http.js';
import { conformanceHelp, parseConformanceArgs, type ConformanceOptions, type ReporterName } from './options.js';
import { renderPlan } from './plan.js';
import { summarize, type Reporter, type RunInfo } from '../../verdict/report.js';
import { openReporters } from '../../verdict/reporterChoice.js';
import { jsonReporter } from '../../verdict/reporters/json.js';
import { htmlReporter } from '../../verdict/reporters/html.js';
import { junitReporter } from '../../verdict/reporters/junit.js';
import { prettyReporter } from '../../verdict/reporters/pretty.js';
import { tapReporter } from '../../verdict/reporters/tap.js';
import { runSuite } from './run.js';
import { checkNames, selectCases } from './select.js';
import { cachedSuite } from './suite.js';

/**
 * Checks that the target answers at all, and whether it honours the mock's fault headers: a plain
 * GET /v1/me must not be a 500 while the same request with `Prefer: code=500` must be a 500 in the
 * error envelope. Both requests are free. Resolves to the transport error when unreachable.
 */
export async function probe(
  target: Target,
  mode: ConformanceOptions['faultHeaders'],
  registry: SchemaRegistry,
): Promise<{ error: string } | { faultHeaders: boolean; keyRefused: boolean }> {
  const plain = await send(target, { method: 'GET', path: '/v1/me', auth: 'valid', headers: {} });
  if (plain.error) return { error: plain.error };
  const keyRefused = plain.status === 401;
  if (mode !== 'auto') return { faultHeaders: mode === 'on', keyRefused };
  const faulted = await send(target, { method: 'GET', path: '/v1/me', auth: 'valid', headers: { prefer: 'code=500' } });
  let envelope = false;
  try {
    // A body cut short (an endless one) is no envelope, and is not decoded to learn that.
    envelope =
      !faulted.incomplete &&
      registry.check(schemaId('error.json'), JSON.parse(faulted.body.toString('utf8'))).length === 0;
  } catch {
    envelope = false;
  }
  return { faultHeaders: plain.status !== 500 && faulted.status === 500 && envelope, keyRefused };
}

const COMMAND = 'conformance';

// Compiling every schema is the slowest step of a start; the compiled registry never changes, so one serves every run.
let compiled: SchemaRegistry | undefined;

export const REPORTERS: Record<ReporterName, (write: (t: string) => void) => Reporter> = {
  pretty: prettyReporter,
  json: jsonReporter,
  junit: junitReporter,
  tap: tapReporter,
  html: htmlReporter,
};

/** The first segment of each documented operation's path other than a version (/text-provider, /image-provider, ...). */
const operationPrefixes = (): string[] => [
  ...new Set(
    operations.filter((op) => op.documented && !/^\/v\d+\//.test(op.path)).map((op) => `/${op.path.split('/')[1]}`),
  ),
];

/**
 * What a base URL ending in a segment the runner adds itself would make of the document's paths, in one line, or
 * undefined for a base URL without one. A version segment (/v1, where the OpenAI SDK's base URL ends) is the
 * --path-prefix of a gateway that mounts the API there; an operation's prefix (/text-provider, the SDK base URL of the
 * README) is already part of every path the runner sends.
 */
export function baseUrlHint(baseUrl: string): string | undefined {
  let path: string;
  try {
    path = new URL(baseUrl).pathname.replace(/\/+$/, '');
  } catch {
    return undefined;
  }
  const root = baseUrl.replace(/\/+$/, '');
  const version = /\/v\d+$/.exec(path)?.[0];
  if (version) {
    // The document's paths are from the root (and /v1/me already has it).
    return (
      `--base-url ends in '${version}', so GET /v1/me is asked at ${version}/v1/me. ` +
      `If the API is served under '${version}', pass --base-url ${root.slice(0, -version.length)} --path-prefix ${version} instead.`
    );
  }
  const prefix = operationPrefixes().find((p) => path.endsWith(p));
  if (!prefix) return undefined;
  const example = operations.find((op) => op.documented && op.path.startsWith(`${prefix}/`))!;
  return (
    `--base-url ends in '${prefix}', so ${example.method} ${example.path} is asked at ${prefix}${example.path}. ` +
    `The API document's paths start at the root and the runner adds '${prefix}' itself: pass --base-url ${root.slice(0, -prefix.length)} instead.`
  );
}

/** `unified-ai-mock conformance`: resolves to the exit code (0 no failure, warnings or not; 1 a failure, or a warning
 * with --strict; 2 usage or unreachable). */
export async function conformance(argv: string[], io: Io = processIo): Promise<number> {
  const registry = (compiled ??= new SchemaRegistry());
  const catalogue = new Catalogue(registry);
  const options = parsedOrExit(
    io,
    COMMAND,
    () => parseConformanceArgs(argv, catalogue, io.env ?? process.env),
    () => conformanceHelp(catalogue),
  );
  if (typeof options === 'number') return options;
  let suite: ReturnType<typeof cachedSuite>;
  try {
    suite = cachedSuite(registry, options.values);
    checkNames(suite.cases, options);
  } catch (err) {
    return commandError(io, COMMAND, (err as Error).message);
  }
  const selected = selectCases(suite.cases, options);
  const cases = selected.cases.map((c) => ({ ...c, expect: { ...c.expect, checks: checksFor(c, options.profile) } }));
  const unsupported = new Set(options.unsupported);
  // The catalogue's rule for the image model (gpt-image-1 takes no response_format); a model it does not list is taken
  // to accept every value.
  const imageResponseFormats = catalogue.ofKind('image').find((m) => m.id === options.values.imageModel)
    ?.limits.response_formats;
  const applicability = {
    unsupported,
    imageModel: options.values.imageModel,
    imageNMax1: options.imageNMax1,
    imageResponseFormats,
  };
  if (options.plan) {
    io.stdout(
      renderPlan(cases, options.profile, selected.filtered, {
        ...applicability,
        faultHeaders: options.faultHeaders === 'on',
        faultProbe: options.faultHeaders === 'auto',
      }),
    );
    return EXIT.ok;
  }
  const hint = options.pathPrefix ? undefined : baseUrlHint(options.baseUrl!);
  if (hint) commandWarning(io, hint);
  const target: Target = {
    baseUrl: options.baseUrl!,
    apiKey: options.apiKey!,
    pathPrefix: options.pathPrefix,
    timeoutMs: options.timeoutMs,
    unknownKey: suite.unknownKey,
    maxBodyBytes: options.maxBodyBytes,
    // A target on loopback or private addresses (a local gateway, the mock) links to itself there.
    mediaAllowPrivate: await mediaAllowsPrivate(options.baseUrl!, options.mediaAllowPrivate),
    routes: routesByPath(options.routes),
    headers: options.headers,
    headerSecrets: secretHeaderValues(options.headers, options.apiKey!),
  };
  const baseline: Target | undefined = options.baseline && {
    ...target,
    baseUrl: options.baseline.url,
    apiKey: options.baseline.apiKey,
    mediaAllowPrivate: await mediaAllowsPrivate(options.baseline.url, options.mediaAllowPrivate),
  };
  const probed = await probe(target, options.faultHeaders, registry);
  if ('error' in probed) return commandError(io, COMMAND, `cannot reach ${options.baseUrl}: ${probed.error}`);
  // A target that does not offer GET /v1/me may refuse it whatever the key: then the refusal proves nothing.
  const refusedKey = (url: string) => {
    if (options.continueOnRefusedKey || unsupported.has('me')) {
      commandWarning(io, `${url} refused the API key on GET /v1/me (401); cases that need a valid key will fail`);
      return undefined;
    }
    return commandError(
      io,
      COMMAND,
      `${url} refused the API key on GET /v1/me (401), so every case that needs a valid key would fail: check the key (--api-key, CONFORMANCE_API_KEY${url === options.baseUrl ? '' : ', --baseline-api-key'}), or pass --continue-on-refused-key to run the cases anyway`,
    );
  };
  if (probed.keyRefused) {
    const stop = refusedKey(options.baseUrl!);
    if (stop !== undefined) return stop;
  }
  if (baseline) {
    const reached = await send(baseline, { method: 'GET', path: '/v1/me', auth: 'valid', headers: {} });
    if (reached.error) return commandError(io, COMMAND, `cannot reach ${baseline.baseUrl}: ${reached.error}`);
    if (reached.status === 401) {
      const stop = refusedKey(baseline.baseUrl);
      if (stop !== undefined) return stop;
    }
  }
  const reporters = openReporters(options.reporters, REPORTERS, io.stdout);
  const info: RunInfo = {
    target: options.baseUrl!,
    profile: options.profile,
    faultHeaders: probed.faultHeaders,
    cases,
    ...(baseline ? { baseline: baseline.baseUrl } : {}),
  };
  reporters.start(info);
  const started = performance.now();
  let done = 0;
  const results = await runSuite(
    cases,
    {
      ...target,
      registry,
      concurrency: options.concurrency,
      retries: options.retries,
      maxRetryWaitMs: 30_000,
      faultHeaders: probed.faultHeaders,
      // The full profile holds a server to the mock's own choices, these shapes among them.
      shouldWarns: options.profile === 'documented' && !options.strict,
      ...applicability,
      ...(baseline ? { baseline } : {}),
    },
    (r) => {
      done++;
      reporters.result(r, done, cases.length);
    },
  );
  const code = reporters.finish({
    info,
    results,
    summary: summarize(results, Math.round(performance.now() - started)),
  });
  // A departure from the baseline fails the run unless it is only reported (--baseline-report-only).
  const departed = results.some((r) => r.departures?.length);
  return departed && !options.baseline?.reportOnly ? EXIT.failed : code;
}
