import { requireCjs } from '../lib/require.js';
import type * as Tldts from 'tldts';

// The Public Suffix List, as tldts compiles it: loaded only when a configuration lists host names.
let tldts: typeof Tldts | undefined;

/**
 * Why a name of `allowedHosts` is refused, or undefined. A name there opens the admin API to every page whose host
 * it covers (DNS rebinding), so it may not cover a public suffix: `*.com`, `*.co.uk`, `*.github.io`, where anyone can
 * own a name (the Public Suffix List, its private domains included), nor any other whole top-level domain (`*.lan`);
 * nor be one (`com`). `*.localhost` stays allowed: those names only ever mean this machine (RFC 6761).
 */
export function allowedHostProblem(entry: string): string | undefined {
  const wildcard = entry.startsWith('*.');
  const name = (wildcard ? entry.slice(2) : entry).toLowerCase();
  if (name.startsWith('[') || name === 'localhost') return undefined;
  tldts ??= requireCjs('tldts') as typeof Tldts;
  const parsed = tldts.parse(name, { allowPrivateDomains: true });
  if (parsed.isIp) return undefined;
  const suffix = parsed.domain === null;
  if (!wildcard && !(suffix && (parsed.isIcann || parsed.isPrivate))) return undefined;
  if (wildcard && !suffix && name.includes('.')) return undefined;
  const what = name.includes('.') ? 'a public suffix, where anyone can own a name' : 'a whole top-level domain';
  const risk = wildcard
    ? 'any web page under it could reach the admin API and read the journal by DNS rebinding'
    : 'a name no one serves the mock at';
  return `'${entry}' ${wildcard ? 'covers' : 'is'} ${what}: ${risk}. List the names you use (mock.example.com, *.dev.example.com)`;
}
