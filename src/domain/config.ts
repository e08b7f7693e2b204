import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES_DIR } from '../lib/paths.js';
import { schemaId, type SchemaRegistry } from '../contract/schemas.js';
import { toDetails } from '../contract/validation.js';

/** One API key the mock accepts. */
export interface KeyConfig {
  readonly key: string;
  readonly label?: string;
  readonly scopes?: readonly string[];
  readonly rateLimit?: { readonly requests: number; readonly windowMs?: number; readonly tokensPerMinute?: number };
}

/** The whole configuration: what `--config FILE`, the flags and `createApp(config)` set. */
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
  faultHeaders: boolean;
  faultRules: unknown[];
  adminToken?: string;
  journalSize: number;
  mediaCache: { entries: number; bytes: number };
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  timeouts: { headersMs: number; requestMs: number; keepAliveMs: number; stallMaxMs: number; shutdownGraceMs: number };
  video: { progress: boolean };
}

/** A partial configuration as written in a file or passed to createApp. */
export type ConfigInput = Partial<Omit<Config, 'pacing' | 'mediaCache' | 'timeouts' | 'video'>> & {
  pacing?: Partial<Config['pacing']>;
  mediaCache?: Partial<Config['mediaCache']>;
  timeouts?: Partial<Config['timeouts']>;
  video?: Partial<Config['video']>;
};

/** 2026-01-01T00:00:00Z: the fixed clock that makes bodies byte-identical across runs. */
export const DEFAULT_EPOCH = 1767225600;

/** The default keys from fixtures/keys.json. */
export function defaultKeys(dir: string = FIXTURES_DIR): KeyConfig[] {
  return (JSON.parse(readFileSync(join(dir, 'keys.json'), 'utf8')) as { keys: KeyConfig[] }).keys;
}

/** Defaults for every field. */
export function defaultConfig(): Config {
  return {
    host: '127.0.0.1',
    port: 4010,
    keys: defaultKeys(),
    strict: false,
    bodyLimit: 20 * 1024 * 1024,
    bodyMemory: 16 * 1024 * 1024,
    clock: DEFAULT_EPOCH,
    pacing: { timeToFirstTokenMs: 0, tokensPerSecond: 0 },
    faultHeaders: true,
    faultRules: [],
    journalSize: 1000,
    mediaCache: { entries: 64, bytes: 64 * 1024 * 1024 },
    logLevel: 'info',
    timeouts: { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000, stallMaxMs: 60_000, shutdownGraceMs: 10_000 },
    video: { progress: false },
  };
}

/** A configuration that failed its schema; the message names the field. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Checks a partial configuration against schemas/config.json and fills in the defaults. */
export function resolveConfig(input: ConfigInput, schemas: SchemaRegistry): Config {
  const errors = schemas.check(schemaId('config.json'), input);
  if (errors.length) {
    const lines = toDetails(errors).map((d) => `  ${d.param ?? '(root)'}: ${d.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const base = defaultConfig();
  return {
    ...base,
    ...input,
    pacing: { ...base.pacing, ...input.pacing },
    mediaCache: { ...base.mediaCache, ...input.mediaCache },
    timeouts: { ...base.timeouts, ...input.timeouts },
    video: { ...base.video, ...input.video },
  } as Config;
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

