// Runs the gateway profile in this process, the mock it starts being the programmatic one, and reads its JSON report.
import { startMockServer } from '../../../src/server/programmatic.js';
import { gatewayConformance } from '../../../src/tools/gateway/cli.js';
import { freePort } from '../../support/index.js';
import { startGateway, type Defect, type TestGateway } from './proxies.js';

/** The key the runner sends the gateway, and the one the test gateways send upstream (the mock's default). */
export const CLIENT_KEY = 'sk-gw-client-0123456789';
export const UPSTREAM_KEY = 'sk-mock-default';

/** The test gateways' timeout, given to the runner: two gaps of the paced stream (1 s each, the bound 0.5 s) fit. */
export const GATEWAY_TIMEOUT_MS = 2_500;

export interface RunOutput {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `conformance --profile gateway` with these arguments. */
export async function runGatewayCli(argv: string[]): Promise<RunOutput> {
  let stdout = '';
  let stderr = '';
  const code = await gatewayConformance(
    ['--profile', 'gateway', ...argv],
    { startUpstream: (config) => startMockServer(config) },
    { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {} },
  );
  return { code, stdout, stderr };
}

/** A case of the JSON report, as the tests read it. */
export interface ReportedCase {
  readonly id: string;
  readonly verdict: string;
  readonly level: string;
  readonly reason?: string;
  readonly failures: { check: string; expected: string; actual: string }[];
  readonly departures?: { what: string; target: string; baseline: string }[];
}

export interface JsonRun extends RunOutput {
  readonly report: {
    profile: string;
    target: string;
    upstream?: string;
    summary: Record<string, number>;
    cases: ReportedCase[];
  };
  /** The ids of each verdict, sorted. */
  readonly ids: (verdict: string) => string[];
  readonly byId: (id: string) => ReportedCase;
}

/** Runs the gateway profile with the JSON reporter and reads the report. */
export async function runGatewayJson(argv: string[]): Promise<JsonRun> {
  const out = await runGatewayCli([...argv, '--reporter', 'json']);
  let report: JsonRun['report'];
  try {
    report = JSON.parse(out.stdout) as JsonRun['report'];
  } catch {
    throw new Error(`no JSON report (exit ${out.code}): ${out.stderr}${out.stdout.slice(0, 500)}`);
  }
  return {
    ...out,
    report,
    ids: (verdict) =>
      report.cases
        .filter((c) => c.verdict === verdict)
        .map((c) => c.id)
        .sort(),
    byId: (id) => report.cases.find((c) => c.id === id)!,
  };
}

/** A test gateway (faithful, or with one defect) in front of a mock the runner starts on a free port. */
export async function gatewayInFront(defect?: Defect): Promise<{ gateway: TestGateway; args: string[] }> {
  const port = await freePort();
  const gateway = await startGateway({
    upstream: `http://127.0.0.1:${port}`,
    upstreamKey: UPSTREAM_KEY,
    timeoutMs: GATEWAY_TIMEOUT_MS,
    ...(defect ? { defect } : {}),
  });
  return {
    gateway,
    args: [
      '--base-url',
      gateway.url,
      '--api-key',
      CLIENT_KEY,
      '--upstream-port',
      String(port),
      '--gateway-timeout',
      String(GATEWAY_TIMEOUT_MS),
      '--upstream-gap',
      '1000',
      '--first-event-bound',
      '500',
    ],
  };
}
