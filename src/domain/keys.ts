import type { KeyConfig } from './config.js';

/** A configured key with its usage counters; the key itself never leaves this object. */
export interface KeyState {
  readonly config: KeyConfig;
  /** The key masked for display, e.g. sk-m...ault. */
  readonly masked: string;
  readonly usage: { requests: number; byOperation: Record<string, number> };
}

/** A key as shown to people: its first four and last four characters at most, never the whole key. Characters are
 * code points, so a mask never holds half of a pair (lone surrogates, which no encoder writes). */
export function maskKey(key: string): string {
  const chars = Array.from(key);
  if (chars.length >= 16) return `${chars.slice(0, 4).join('')}...${chars.slice(-4).join('')}`;
  if (chars.length >= 8) return `${chars.slice(0, 2).join('')}...${chars.slice(-2).join('')}`;
  return '***';
}

/** Key states for the configured keys. */
export function keyStates(keys: readonly KeyConfig[]): KeyState[] {
  return keys.map((config) => ({ config, masked: maskKey(config.key), usage: { requests: 0, byOperation: {} } }));
}

/**
 * Whether a presented token is this key, in time that depends on the token's length alone: every
 * character is compared, with no early exit, so the time says nothing about how much of a guess
 * matched, nor about the key's length. (Hashing both sides for crypto.timingSafeEqual, which needs
 * equal lengths, gives the same guarantee at about ten times the cost: a tenth of a 401.)
 */
export function sameSecret(token: string, key: string): boolean {
  let diff = token.length ^ key.length;
  for (let i = 0; i < token.length; i++) diff |= token.charCodeAt(i) ^ key.charCodeAt(i % key.length);
  return diff === 0;
}

/** Finds the key state for a presented token; every configured key is compared, always, in constant time. */
export function findKey(states: readonly KeyState[], token: string): KeyState | undefined {
  let found: KeyState | undefined;
  for (const state of states) if (sameSecret(token, state.config.key) && !found) found = state;
  return found;
}
