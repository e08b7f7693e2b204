import { defaultKeys, type ConfigInput } from '../../domain/config.js';
import type { FaultRule } from '../../domain/faults/rules.js';
import type { JournalEntry } from '../../domain/journal/journal.js';
import { packageLimits } from '../../domain/limits.js';
import { attemptsOf, byRequest } from './attempts.js';
import {
  DEFAULT_OPERATION,
  grade,
  notApplicableBefore,
  type ClientOutcome,
  type Grade,
  type Burst,
  type GradeOptions,
} from './grade.js';
import type { Scenario } from './scenarios.js';

/**
 * What the runner needs of a mock: the programmatic API's MockServer has all of it. The runner does not
 * start one itself: whoever calls it passes a starter, so this folder stays below src/server/ (which
 * offers `mock.checkClient()` through it) and the grading can be tested without a socket.
 */
interface ScenarioMock {
  readonly url: string;
  readonly openaiBaseURL: string;
  requests(): JournalEntry[];
  close(): Promise<void>;
}

/** Starts a mock with a configuration (port 0: a free one). */
export type StartMock = (config: ConfigInput) => Promise<ScenarioMock>;

/** What a client under test is told: the command gets it as environment variables, a callback as this object. */
export interface ClientContext {
  /** The `baseURL` for the openai SDK (OPENAI_BASE_URL): the mock's URL with /text-provider. */
  readonly baseURL: string;
  /** The mock's own URL, for clients that add the API's paths themselves. */
  readonly url: string;
  /** OPENAI_API_KEY. */
  readonly apiKey: string;
  /** MOCK_SCENARIO: the scenario's id. */
  readonly scenario: string;
  /** MOCK_CONCURRENCY: how many requests to start at once (1 but in the storm). */
  readonly concurrency: number;
  /** The variables a command gets: OPENAI_BASE_URL, OPENAI_API_KEY, MOCK_SCENARIO, MOCK_CONCURRENCY. */
  readonly env: Readonly<Record<string, string>>;
  /** Aborted when the run stops the client (past its deadline, or past the attempts allowed). */
  readonly signal: AbortSignal;
}

/** How the client's run ended, as the launcher sees it (the runner adds `stopped` and `ms`). */
export type LaunchOutcome = Omit<ClientOutcome, 'stopped' | 'ms'>;

/** Runs the client once against the scenario's mock: a command, or a test suite's callback. */
export type Launch = (context: ClientContext) => Promise<LaunchOutcome>;

/** The key the client is given, with the scenario's rate limit; and the one the mock does not know. */
export const CLIENT_KEY = 'sk-mock-client-check';
const UNKNOWN_KEY = 'sk-mock-client-check-unknown';
/** A client that goes on this long in a scenario without a bound of its own is stopped (a retry loop with no wait). */
const ATTEMPTS_CAP = 200;
const DEFAULT_DEADLINE_MS = 20_000;
const DEFAULT_MAX_ATTEMPTS = 5;
/** How often the runner looks at the journal to stop a client that retries past its bound. */
const WATCH_MS = 100;
/** A client past its bound gets this long to give up on its own before it is stopped (its exit status is worth
 * reading). */
const BOUND_GRACE_MS = 1_000;
/** After the client ends, the journal is read once it has been still this long (the last connections closing), or after
 * SETTLE_MAX_MS. */
const SETTLE_MS = 150;
const SETTLE_MAX_MS = 2_000;
/** How long a stopped callback gets to return once its mock is closed. */
const STOP_GRACE_MS = 2_000;

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** How long a held answer or first token is held: past the client's declared timeout. */
function holdMs(scenario: Scenario, options: GradeOptions): number {
  const hold = scenario.mock.hold;
  return hold ? (options.clientTimeoutMs ?? 0) + hold.pastClientTimeoutMs : 0;
}

/** How long the client may run: the scenario's deadline, plus a held answer's hold for each attempt it may make. */
export function deadlineOf(scenario: Scenario, options: GradeOptions): number {
  const held = holdMs(scenario, options);
  return (
    (scenario.deadlineMs ?? DEFAULT_DEADLINE_MS) +
    (held ? held * (scenario.expect.attempts?.max ?? DEFAULT_MAX_ATTEMPTS) : 0)
  );
}

/**
 * The configuration of a scenario's mock: one key (with the scenario's rate limit), the scenario's fault
 * rules, the hold as pacing or a delay rule, and the fault headers off, so nothing the client sends can
 * change the script. `base` carries settings of the caller's own mock (reply rules, clock, strict).
 */
export function scenarioConfig(scenario: Scenario, options: GradeOptions, base: ConfigInput = {}): ConfigInput {
  const operation = scenario.operation ?? DEFAULT_OPERATION;
  const held = holdMs(scenario, options);
  const rules: FaultRule[] = [...(scenario.mock.faultRules ?? [])];
  if (scenario.mock.hold?.what === 'answer')
    rules.push({ id: 'hold-answer', match: { operation }, fault: { delayMs: held } });
  const rateLimit = scenario.mock.rateLimit;
  return {
    ...base,
    host: '127.0.0.1',
    port: 0,
    keys: [
      {
        key: CLIENT_KEY,
        name: 'client-check',
        scopes: defaultKeys()[0]?.scopes ?? [],
        ...(rateLimit ? { rateLimit: { ...rateLimit } } : {}),
      },
    ],
    faultRules: rules,
    faultHeaders: false,
    pacing: { timeToFirstTokenMs: scenario.mock.hold?.what === 'first-token' ? held : 0, tokensPerSecond: 0 },
    // A delay fault may hold an answer at most stallMaxMs, and no stream (its first token included) outlasts
    // streamMaxMs.
    timeouts: {
      ...base.timeouts,
      stallMaxMs: Math.max(base.timeouts?.stallMaxMs ?? 60_000, held + 1_000),
      streamMaxMs: Math.max(base.timeouts?.streamMaxMs ?? 120_000, held + 1_000),
    },
    journalSize: 10_000,
  };
}

/**
 * Whether the client has gone past what the scenario allows: 'cap' when it is hammering the mock (stop it
 * now), 'bound' when a request has more attempts than allowed (it may still be about to give up).
 */
function pastBound(scenario: Scenario, entries: readonly JournalEntry[]): 'cap' | 'bound' | undefined {
  const attempts = attemptsOf(entries, scenario.operation ?? DEFAULT_OPERATION);
  if (attempts.length > ATTEMPTS_CAP) return 'cap';
  const max = scenario.expect.attempts?.max;
  return max !== undefined && byRequest(attempts).some((g) => g.length > max) ? 'bound' : undefined;
}

/** Resolves once the journal has stopped growing: the client's last connections have closed and been recorded. */
async function settled(mock: ScenarioMock): Promise<JournalEntry[]> {
  let seen = mock.requests().length;
  for (let waited = 0; waited < SETTLE_MAX_MS; waited += SETTLE_MS) {
    await sleep(SETTLE_MS);
    const now = mock.requests().length;
    if (now === seen) break;
    seen = now;
  }
  return mock.requests();
}

/**
 * Plays one scenario: starts its mock, runs the client with the scenario's variables, stops the client
 * if it runs past its deadline or retries past its bound, then grades the journal and the outcome.
 */
export async function runScenario(
  scenario: Scenario,
  launch: Launch,
  startMock: StartMock,
  options: GradeOptions & { base?: ConfigInput } = {},
): Promise<Grade> {
  const deadlineMs = deadlineOf(scenario, options);
  const gradeOptions: GradeOptions & Burst = {
    clientTimeoutMs: options.clientTimeoutMs,
    deadlineMs,
    burstMs: packageLimits().clientCheck.burstMs,
  };
  if (notApplicableBefore(scenario, gradeOptions)) return grade(scenario, [], { exitCode: null, ms: 0 }, gradeOptions);
  const mock = await startMock(scenarioConfig(scenario, gradeOptions, options.base));
  try {
    const apiKey = scenario.mock.apiKey === 'unknown' ? UNKNOWN_KEY : CLIENT_KEY;
    const concurrency = scenario.concurrency ?? 1;
    const env = {
      OPENAI_BASE_URL: mock.openaiBaseURL,
      OPENAI_API_KEY: apiKey,
      MOCK_SCENARIO: scenario.id,
      MOCK_CONCURRENCY: String(concurrency),
    };
    const stop = new AbortController();
    let stopped: ClientOutcome['stopped'];
    const halt = (why: NonNullable<ClientOutcome['stopped']>) => {
      if (stopped) return;
      stopped = why;
      stop.abort(new Error(`client-check stopped the client: ${why}`));
    };
    const deadline = setTimeout(() => halt('deadline'), deadlineMs);
    let pastSince: number | undefined;
    const watch = setInterval(() => {
      const past = pastBound(scenario, mock.requests());
      if (past) pastSince ??= performance.now();
      if (past === 'cap' || (past && performance.now() - pastSince! >= BOUND_GRACE_MS)) halt('attempts');
    }, WATCH_MS);
    const started = performance.now();
    const running = launch({
      baseURL: mock.openaiBaseURL,
      url: mock.url,
      apiKey,
      scenario: scenario.id,
      concurrency,
      env,
      signal: stop.signal,
    });
    // A stopped client that does not return (a callback cannot be killed) is left behind once its mock is closed.
    const abandoned = new Promise<LaunchOutcome>((done) => {
      stop.signal.addEventListener('abort', () => {
        void mock
          .close()
          .then(() => sleep(STOP_GRACE_MS))
          .then(() => done({ exitCode: null }));
      });
    });
    let ended: LaunchOutcome;
    try {
      ended = await Promise.race([running, abandoned]);
    } finally {
      clearTimeout(deadline);
      clearInterval(watch);
    }
    const ms = Math.round(performance.now() - started);
    const entries = await settled(mock);
    return grade(scenario, entries, { ...ended, ms, ...(stopped ? { stopped } : {}) }, gradeOptions);
  } finally {
    await mock.close();
  }
}

/**
 * The variables a callback's run sets in process.env, so that clients that read them (new OpenAI()) need no arguments.
 */
const ENV_NAMES = ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'MOCK_SCENARIO', 'MOCK_CONCURRENCY'] as const;

/**
 * A launcher for a test suite's callback: resolved is exit 0, thrown is exit 1. While it runs,
 * process.env holds the scenario's variables (restored after), so `new OpenAI()` finds the mock.
 */
export function callbackLaunch(client: (context: ClientContext) => unknown): Launch {
  return async (context) => {
    const saved = ENV_NAMES.map((n) => [n, process.env[n]] as const);
    Object.assign(process.env, context.env);
    try {
      await client(context);
      return { exitCode: 0 };
    } catch (err) {
      return { exitCode: 1, error: String(err instanceof Error ? `${err.name}: ${err.message}` : err).slice(0, 500) };
    } finally {
      for (const [n, v] of saved) {
        if (v === undefined) delete process.env[n];
        else process.env[n] = v;
      }
    }
  };
}
