import { timingSafeEqual } from 'node:crypto';
import type { KeyConfig } from './config.js';
import { sha256 } from './ids.js';
import type { KeyState } from './types.js';

/** A key as shown to people: its first four and last four characters at most, never the whole key. */
export function maskKey(key: string): string {
  if (key.length >= 16) return `${key.slice(0, 4)}...${key.slice(-4)}`;
  if (key.length >= 8) return `${key.slice(0, 2)}...${key.slice(-2)}`;
  return '***';
}

/** Key states for the configured keys. */
export function keyStates(keys: readonly KeyConfig[]): KeyState[] {
  return keys.map((config) => ({ config, digest: sha256(config.key), masked: maskKey(config.key), usage: { requests: 0, byOperation: {} } }));
}

/**
 * Finds the key state for a presented token. Every configured key is compared, always, with
 * timingSafeEqual over SHA-256 digests, so the time taken says nothing about how close a guess was.
 */
export function findKey(states: readonly KeyState[], token: string): KeyState | undefined {
  const presented = sha256(token);
  let found: KeyState | undefined;
  for (const state of states) if (timingSafeEqual(state.digest, presented) && !found) found = state;
  return found;
}
