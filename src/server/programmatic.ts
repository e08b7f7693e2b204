import { checkReplyRule } from '../domain/replyRules.js';
import type { ReplyRule } from '../text/replies.js';
import type { Config, ConfigInput, KeyConfig } from '../domain/config.js';
import { RuleError, type FaultRule, type RuleView } from '../domain/faults/rules.js';
import type { JournalEntry } from '../domain/journal/journal.js';
import type { Awaitable } from '../domain/state/store.js';
import { start } from './server.js';
import type { Grade } from '../tools/clientCheck/grade.js';
import { callbackLaunch, runScenario, type ClientContext } from '../tools/clientCheck/run.js';
import { checkScenario, scenarioById, type Scenario } from '../tools/clientCheck/scenarios.js';
import type { RelayStats, ViolationsReport as Report } from '../relay/relay.js';

/** Options of startMockServer: the configuration the CLI and config file take, plus whether to log. */
export interface MockServerOptions extends ConfigInput {
  /** Write one JSON log line per request to stdout at `logLevel`; off by default, so test output stays clean. */
  readonly log?: boolean;
}

/** A mock server started for a test suite, with handles to steer it and read what it saw. */
export interface MockServer {
  /** Base URL, e.g. `http://127.0.0.1:53127`; the API's paths go after it (`/text-provider/chat/completions`). */
  readonly url: string;
  readonly port: number;
  /** `baseURL` for the official `openai` package: `${url}/text-provider`. */
  readonly openaiBaseURL: string;
  /** The request inspector page (`${url}/__admin/`): open it in a browser on this machine (docs/inspector.md). */
  readonly inspectorURL: string;
  /** The first configured key (`sk-mock-default` by default). */
  readonly apiKey: string;
  /** Every configured key, with its label, scopes and rate limit. */
  readonly keys: readonly KeyConfig[];
  /** The configuration in effect, defaults filled in. */
  readonly config: Readonly<Config>;
  /** Adds a fault rule after the others (as POST /__admin/faults does) and returns it with its id and counters. */
  addFaultRule(rule: FaultRule): RuleView;
  /** The fault rules in the order they are tried, with their counters. */
  faultRules(): RuleView[];
  /** Removes one fault rule; false when there is none with that id. */
  removeFaultRule(id: string): boolean;
  /** Removes every fault rule, configured ones included; returns how many there were. */
  clearFaultRules(): number;
  /** Adds a reply rule, tried after earlier added ones and before the configured and built-in rules. */
  addReplyRule(rule: ReplyRule): ReplyRule;
  /** Removes the reply rules added with addReplyRule; returns how many there were. */
  clearReplyRules(): number;
  /** The request journal, oldest first: the entries GET /__admin/requests lists. */
  requests(): JournalEntry[];
  /** Empties the journal; returns how many entries it held. */
  clearRequests(): number;
  /** Gives every key its full rate-limit allowance back and every fault rule its first state, as POST /__admin/reset
   * does. */
  reset(): void;
  /** With `proxy` or `replay`: cassettes written and failed, replays and misses, exchanges judged and those with
   * violations. */
  relayStats(): RelayStats | undefined;
  /** With `proxy`: the violations seen so far, in the conformance runner's report shape (written to `violationsReport`
   * on close). */
  violations(): Report | undefined;
  /**
   * Plays a client-check scenario (an id of client-check/, or a scenario object) to `client` and grades it
   * from the journal: a fresh mock runs the scenario's fault script (with this mock's reply rules file,
   * clock and strictness) while `client` runs; resolved counts as exit 0, thrown as exit 1. The client
   * must use `context.baseURL` and `context.apiKey`, which are also in process.env (OPENAI_BASE_URL,
   * OPENAI_API_KEY, MOCK_SCENARIO, MOCK_CONCURRENCY) during the call: one check at a time.
   */
  checkClient(
    scenario: string | Scenario,
    client: (context: ClientContext) => unknown,
    options?: CheckClientOptions,
  ): Promise<Grade>;
  /** Stops the server and closes every connection at once; calling it again returns the same promise. */
  close(): Promise<void>;
  /** `await using mock = await startMockServer()` closes it at the end of the block. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A value of the in-memory state. With `state: redis://...` the state answers asynchronously, and the
 * synchronous handles of this object cannot give it: the admin API (`/__admin/...`) serves instead.
 */
function now<T>(value: Awaitable<T>): T {
  if (value instanceof Promise) {
    value.catch(() => undefined);
    throw new Error(
      'with state in Redis, use the admin API (/__admin/faults, /__admin/requests, /__admin/reset) instead of this handle',
    );
  }
  return value;
}

/** Options of checkClient. */
export interface CheckClientOptions {
  /** The client's own request timeout in ms (the CLI's --client-timeout): the timeout scenarios need it. */
  readonly clientTimeoutMs?: number;
}

// A key given as undefined (e.g. `port: process.env.PORT && Number(...)`) means "not set", as it does in a config file.
function defined(options: MockServerOptions): ConfigInput {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as ConfigInput;
}

// Rules are stored as the admin API stores a posted body: plain JSON, so a later change to the caller's
// object cannot change a stored rule, and a field set to undefined counts as absent.
const asJson = (value: unknown): unknown => (value === undefined ? value : JSON.parse(JSON.stringify(value)));

// The public surface names the field in the message itself: a caller sees one string, not RuleError.param.
function faultRuleError(err: unknown): unknown {
  if (!(err instanceof RuleError)) return err;
  const where = err.param && !err.message.includes(`'${err.param}'`) ? `${err.param}: ` : '';
  return new RuleError(`invalid fault rule: ${where}${err.message}`, err.param, err.status);
}

/** Where a client finds things on a mock at `url`: the OpenAI SDK's base URL, the inspector and the metrics. */
export const addressesOf = (url: string) => ({
  openaiBaseURL: `${url}/text-provider`,
  inspectorURL: `${url}/__admin/`,
  metricsURL: `${url}/metrics`,
});

/**
 * Starts a mock on a free port of 127.0.0.1 (unless `port` or `host` say otherwise) and resolves once it listens.
 * Bad options reject with a ConfigError that names the field.
 */
export async function startMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  const { log, ...config } = options;
  const running = await start({ port: 0, ...defined(config) }, { log: log === true });
  const { services } = running;
  // Added reply rules go at the front of the server's own list, which the chat handler reads on every request.
  const replyRules = services.replyRules;
  const added: ReplyRule[] = [];
  const close = () => running.close();
  return {
    url: running.url,
    port: running.port,
    openaiBaseURL: addressesOf(running.url).openaiBaseURL,
    inspectorURL: addressesOf(running.url).inspectorURL,
    apiKey: running.config.keys[0]!.key,
    keys: running.config.keys,
    config: running.config,
    addFaultRule(rule) {
      try {
        return now(services.state.addRule(asJson(rule)));
      } catch (err) {
        throw faultRuleError(err);
      }
    },
    faultRules: () => now(services.state.rules()),
    removeFaultRule: (id) => now(services.state.deleteRule(id)),
    clearFaultRules: () => now(services.state.clearRules()),
    addReplyRule(rule) {
      const plain = asJson(rule) as ReplyRule;
      const compiled = checkReplyRule(services.schemas, plain);
      if (added.some((r) => r.id === plain.id))
        throw new Error(`invalid reply rule: id: a rule with id "${plain.id}" was already added`);
      replyRules.splice(added.length, 0, compiled);
      added.push(plain);
      return asJson(plain) as ReplyRule;
    },
    clearReplyRules() {
      replyRules.splice(0, added.length);
      return added.splice(0).length;
    },
    requests: () => now(services.journal.entries()),
    clearRequests: () => now(services.journal.clear()),
    reset() {
      now(services.state.resetLimits(services.keys));
      now(services.state.resetRules());
    },
    relayStats: () => running.relay?.stats(),
    violations: () => running.relay?.violations(),
    checkClient(scenario, client, opts = {}) {
      const played =
        typeof scenario === 'string'
          ? scenarioById(services.schemas, scenario)
          : checkScenario(services.schemas, asJson(scenario), 'checkClient scenario');
      const { replyRules: rules, clock, strict } = running.config;
      const base = { clock, strict, ...(rules === undefined ? {} : { replyRules: rules }) };
      return runScenario(played, callbackLaunch(client), (config) => startMockServer(config), {
        clientTimeoutMs: opts.clientTimeoutMs,
        base,
      });
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
