// Proxy, record and replay: the answer of the API's operations from a real implementation or from cassettes.
// It takes the handler's place in the steps (createApp), so authentication, rate limits, body parsing and
// faults run before it as they do before any handler. Forwarding is forward.ts (a stream: forwardStream.ts, a
// whole body: forwardBody.ts), recording recorder.ts, judging judge.ts and validation.ts, replaying replay.ts.
import type { SchemaRegistry } from '../contract/schemas.js';
import { ConfigError, type Config } from '../domain/config.js';
import { configSecrets, secretScrubber } from '../domain/secrets.js';
import type { Services } from '../domain/services.js';
import type { ErrorSink } from '../pipeline/errors.js';
import { realTimers, type StreamTimers } from '../pipeline/pacer.js';
import type { Step } from '../pipeline/steps.js';
import type { Report } from '../verdict/report.js';
import { CassetteStore } from './cassette.js';
import { forward } from './forward.js';
import type { Upstream } from './upstream.js';
import { Judge } from './judge.js';
import { Recorder } from './recorder.js';
import { replayStep, type ReplayCounts } from './replay.js';
import { mockAnswer, relayed } from './scope.js';
import { ViolationLog } from './validation.js';

export { relayed } from './scope.js';

/** The validating proxy's report: the conformance runner's, one failed case per exchange with violations. */
export type ViolationsReport = Report;

/** Counters of a relaying mock. */
export interface RelayStats {
  /** Cassettes written, and writes that failed (each one logged). */
  recorded: number;
  recordFailures: number;
  /** Requests answered from a cassette, and requests that had none. */
  replayed: number;
  misses: number;
  /** Exchanges the proxy judged, and those with at least one violation. */
  exchanges: number;
  withViolations: number;
}

/** What createApp gets: the step in the handler's place, and what the server reads and closes. */
export interface Relay {
  readonly mode: 'proxy' | 'replay';
  /** The answering step: relayed operations go upstream or to a cassette; the others to `validate` then `handle`. */
  step(validate: Step, handle: Step): Step;
  stats(): RelayStats;
  /** The violations seen so far, as the conformance runner's report. */
  violations(): Report | undefined;
  /** Waits for cassette writes in flight, then writes the violations report; resolves to the files written. */
  close(): Promise<string[]>;
}

const NONE: RelayStats = { recorded: 0, recordFailures: 0, replayed: 0, misses: 0, exchanges: 0, withViolations: 0 };

/** Checks the relay settings and builds the relay; undefined when the mock answers by itself. */
export function createRelay(
  config: Config,
  services: Services,
  schemas: SchemaRegistry,
  report: ErrorSink,
  timers: StreamTimers = realTimers,
): Relay | undefined {
  if (config.proxy && config.replay)
    throw new ConfigError(
      'proxy and replay exclude each other: record with --proxy URL --record DIR, replay with --replay DIR',
    );
  if (config.record && !config.proxy)
    throw new ConfigError('record needs proxy: cassettes are recorded from a real upstream (--proxy URL --record DIR)');
  if (config.replay) return replayRelay(config, services);
  if (config.proxy) return proxyRelay(config.proxy, config, services, schemas, report, timers);
  return undefined;
}

/** The relay of `--replay DIR`: answers from cassettes. */
function replayRelay(config: Config, services: Services): Relay {
  const store = new CassetteStore(config.replay!);
  const counts: ReplayCounts = { replayed: 0, misses: 0 };
  return {
    mode: 'replay',
    step: (validate, handle) => replayStep(store, config, services, counts, validate, handle),
    stats: () => ({ ...NONE, ...counts }),
    violations: () => undefined,
    close: async () => [],
  };
}

/** The relay of `--proxy URL` (with `--record DIR`, recording): answers from the upstream, judged. */
function proxyRelay(
  proxy: string,
  config: Config,
  services: Services,
  schemas: SchemaRegistry,
  report: ErrorSink,
  timers: StreamTimers,
): Relay {
  const secrets = configSecrets(config);
  const scrub = secretScrubber(secrets);
  const scrubPlain = secretScrubber(secrets, { json: false });
  const base = proxy.replace(/\/+$/, '');
  const log = new ViolationLog(base, config.validationProfile, scrub, services.limits.proxyReport);
  const recorder = config.record ? new Recorder(new CassetteStore(config.record), base, scrub, report) : undefined;
  const up: Upstream = {
    base,
    config,
    services,
    schemas,
    timers,
    scrub: scrubPlain,
    judge: new Judge(log, scrubPlain),
    recorder,
  };
  return {
    mode: 'proxy',
    step: (validate, handle) =>
      function relay(ctx, state) {
        if (!relayed(state.operation!)) return mockAnswer(validate, handle, ctx, state);
        return forward(up, ctx, state, validate, handle);
      },
    stats: () => ({
      ...NONE,
      recorded: recorder?.recorded ?? 0,
      recordFailures: recorder?.failures ?? 0,
      exchanges: log.counts.exchanges,
      withViolations: log.counts.withViolations,
    }),
    violations: () => log.report(),
    async close() {
      await recorder?.settle();
      return config.violationsReport ? log.write(config.violationsReport) : [];
    },
  };
}
