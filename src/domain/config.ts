import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES_DIR } from '../lib/paths.js';
import { forbiddenKeyAt, forbiddenKeyMessage } from '../lib/keys.js';
import { allowedHostProblem } from './allowedHosts.js';
import { schemaFile, schemaNumber } from '../contract/schemaData.js';
import { schemaId, type SchemaRegistry } from '../contract/schemas.js';
import { problemLines, type ProblemSource } from './problems.js';
import type { Profile } from './latency/types.js';

/** One API key the mock accepts. */
export interface KeyConfig {
  readonly key: string;
  /** The key's name (`/v1/me`'s `name`, a fault rule's `match.key`). */
  readonly name?: string;
  /** The old spelling of `name`: a resolved configuration carries both, with the same value. */
  readonly label?: string;
  readonly scopes?: readonly string[];
  readonly rateLimit?: { readonly requests: number; readonly windowMs?: number; readonly tokensPerMinute?: number };
}

/**
 * The whole configuration: what `--config FILE`, the flags and `createApp(config)` set. schemas/config.json is
 * the table of settings (each field's bounds, default, meaning and flag); this type only lets code use them,
 * and test/domain/config.test.ts checks that the two list the same fields.
 */
export interface Config {
  host: string;
  port: number;
  keys: KeyConfig[];
  strict: boolean;
  /** Largest accepted request body in bytes (image edit carries base64). */
  bodyLimit: number;
  /** Bytes of large request bodies (1 MiB and over) read and handled at once; later ones wait their turn unread. */
  bodyMemory: number;
  /** Unix seconds used for every `created` field, or "system" for the wall clock. */
  clock: number | 'system';
  /** Base URL used in media links; by default the URL the client called. */
  publicUrl?: string;
  /** A user reply-rules file, placed before the built-in rules. */
  replyRules?: string;
  pacing: { timeToFirstTokenMs: number; tokensPerSecond: number };
  /** Latency profiles (docs/load-testing.md); off by default. The names are checked against the catalogue's when
   * the services are built. */
  latency: {
    /** `off`, `catalogue`, or a profile's name for every model. */
    profile: string;
    seed: number;
    /** Profiles of the configuration's own, added to the catalogue's. */
    profiles: Record<string, Profile>;
    /** Model id to profile name (`off`, `catalogue`). */
    models: Record<string, string>;
    queueFullStatus: 429 | 503;
    retryAfterMs: number;
  };
  faultHeaders: boolean;
  faultRules: unknown[];
  adminToken?: string;
  /** Host names the admin API answers to without an admin token, besides the loopback names and the publicUrl host. */
  allowedHosts: string[];
  journalSize: number;
  /** `memory`, or the Redis URL of the state every instance shares (rate limits, fault rules, journal, video tasks). */
  state: string;
  mediaCache: { entries: number; bytes: number };
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** The names GET /metrics gives its metrics: the mock's, vLLM's, both; `off`: no such route. */
  metrics: 'mock' | 'vllm' | 'both' | 'off';
  timeouts: {
    headersMs: number;
    requestMs: number;
    keepAliveMs: number;
    stallMaxMs: number;
    streamMaxMs: number;
    answerMaxMs: number;
    shutdownGraceMs: number;
  };
  video: { progress: boolean };
  /** Base URL of a real implementation to forward the API's operations to (docs/record-replay.md). */
  proxy?: string;
  /** The key sent upstream; createApp falls back to the UPSTREAM_API_KEY environment variable. */
  upstreamKey?: string;
  /** Folder the proxy writes cassettes to. */
  record?: string;
  /** Folder of cassettes to answer from. */
  replay?: string;
  replayFallback: 'error' | 'mock';
  /** Events per second of replayed streams instead of the recorded gaps. */
  replayTps?: number;
  validationProfile: 'documented' | 'full';
  /** File the proxy's violations are written to on exit. */
  violationsReport?: string;
}

// The fields that group others (pacing, timeouts, ...): a partial configuration may give some of their members.
type Group = {
  [K in keyof Config]-?: Config[K] extends readonly unknown[] ? never : Config[K] extends object ? K : never;
}[keyof Config];

/** A partial configuration as written in a file or passed to createApp. */
export type ConfigInput = Partial<Omit<Config, Group>> & { [K in Group]?: Partial<Config[K]> };

/** One node of schemas/config.json, as far as the settings code reads it. */
export interface SettingSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, SettingSchema>>;
  readonly items?: SettingSchema;
  readonly anyOf?: readonly SettingSchema[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly default?: unknown;
  readonly description?: string;
  /** The command-line flag of `serve` that sets the field, with its value placeholder: `--body-limit BYTES`. */
  readonly 'x-flag'?: string;
  /** The flag's one-letter form: `-p`. */
  readonly 'x-short'?: string;
  /** The flag's one sentence in `serve --help`. */
  readonly 'x-help'?: string;
  /** The heading `serve --help` lists the flag under. */
  readonly 'x-group'?: 'server' | 'access' | 'answers' | 'timing' | 'relay';
}

/** schemas/config.json: the one table of settings. */
export const CONFIG_SCHEMA = schemaFile('config.json') as SettingSchema;

/**
 * One setting: a field that holds a value (not a group such as pacing), by its path (`['pacing', 'tokensPerSecond']`).
 */
export interface Setting {
  readonly path: readonly string[];
  readonly schema: SettingSchema;
}

/** Every setting of schemas/config.json in the file's order, the members of groups (pacing, timeouts, ...) in their
 * place. */
export function configSettings(node: SettingSchema = CONFIG_SCHEMA, path: readonly string[] = []): Setting[] {
  return Object.entries(node.properties ?? {})
    .filter(([name]) => !name.startsWith('$'))
    .flatMap(([name, child]) =>
      child.properties ? configSettings(child, [...path, name]) : [{ path: [...path, name], schema: child }],
    );
}

/** 2026-01-01T00:00:00Z, the default of `clock` in schemas/config.json: the fixed clock that makes bodies
 * byte-identical across runs. */
export const DEFAULT_EPOCH = schemaNumber('config.json', '/properties/clock/default');

/** The request window of a rate limit that does not give one (schemas/config.json, keys[].rateLimit.windowMs). */
const DEFAULT_WINDOW_MS = schemaNumber(
  'config.json',
  '/properties/keys/items/properties/rateLimit/properties/windowMs/default',
);

/** The request window of a key's rate limit: its own, else the default. Every reader of a window asks here. */
export const windowMsOf = (limit: NonNullable<KeyConfig['rateLimit']>): number => limit.windowMs ?? DEFAULT_WINDOW_MS;

/** A key's name, written `name` or (the old spelling) `label`: both fields hold it from here on. */
const named = (k: KeyConfig): KeyConfig => {
  const name = k.name ?? k.label;
  return name === undefined ? k : { ...k, name, label: name };
};

/** The default keys from fixtures/keys.json. */
export function defaultKeys(dir: string = FIXTURES_DIR): KeyConfig[] {
  return (JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')) as { keys: KeyConfig[] }).keys.map(named);
}

/** The `default` of every field of a schema node, in the schema's order; a group gets an object of its members'
 * defaults. */
function defaultsOf(
  node: SettingSchema,
  fromFiles: Readonly<Record<string, () => unknown>> = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    if (fromFiles[name]) out[name] = fromFiles[name]();
    else if (child.default !== undefined) out[name] = structuredClone(child.default);
    else if (child.properties) out[name] = defaultsOf(child);
  }
  return out;
}

/** Defaults for every field: the `default`s of schemas/config.json, and the keys of fixtures/keys.json (a file, not a
 * value a schema can hold). */
export function defaultConfig(): Config {
  return defaultsOf(CONFIG_SCHEMA, { keys: () => defaultKeys() }) as unknown as Config;
}

/** A configuration that failed its schema; the message names the field. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Checks a partial configuration against schemas/config.json; a ConfigError names every problem, each by what the
 * user wrote when the source says (the flag, or the file and its key). */
export function checkConfig(input: ConfigInput, schemas: SchemaRegistry, source: ProblemSource = {}): void {
  const fail = (lines: readonly string[]) =>
    new ConfigError(`invalid configuration:\n${lines.map((l) => `  ${l}`).join('\n')}`);
  const forbidden = forbiddenKeyAt(input);
  if (forbidden !== undefined) throw fail([forbiddenKeyMessage(forbidden)]);
  const errors = schemas.check(schemaId('config.json'), input);
  if (errors.length) throw fail(problemLines(errors, source));
  const hosts = (input.allowedHosts ?? []).flatMap((name, i) => {
    const problem = allowedHostProblem(name);
    const where =
      source.flagAt?.(['allowedHosts', String(i)]) ?? `allowedHosts[${i}]${source.file ? ` in ${source.file}` : ''}`;
    return problem ? [`${where}: ${problem}`] : [];
  });
  if (hosts.length) throw fail(hosts);
}

/** Checks a partial configuration against schemas/config.json and fills in the defaults. */
export function resolveConfig(input: ConfigInput, schemas: SchemaRegistry): Config {
  checkConfig(input, schemas);
  const base = defaultConfig() as unknown as Record<string, unknown>;
  const given = input as Record<string, unknown>;
  const config: Record<string, unknown> = { ...base, ...given };
  // A group (pacing, timeouts, ...) given in part keeps the defaults of the members it leaves out.
  for (const [name, field] of Object.entries(CONFIG_SCHEMA.properties ?? {})) {
    if (field.properties) config[name] = { ...(base[name] as object), ...(given[name] as object | undefined) };
  }
  // A rule across two fields, which the schema cannot state: no stream outlasts the stream time limit,
  // so a first token due later could never be sent.
  config.keys = (config.keys as KeyConfig[]).map(named);
  const { pacing, timeouts } = config as unknown as Config;
  if (pacing.timeToFirstTokenMs > timeouts.streamMaxMs) {
    throw new ConfigError(
      `invalid configuration:\n  pacing.timeToFirstTokenMs: ${pacing.timeToFirstTokenMs} is above timeouts.streamMaxMs (${timeouts.streamMaxMs}), the stream time limit: raise that too`,
    );
  }
  return config as unknown as Config;
}

/** Reads a JSON configuration file; a parse error names the file. */
export function readConfigFile(path: string): ConfigInput {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  try {
    const data = JSON.parse(text) as unknown;
    if (!data || typeof data !== 'object' || Array.isArray(data)) throw new Error('the file must hold a JSON object');
    return data as ConfigInput;
  } catch (err) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(err as Error).message}`);
  }
}
