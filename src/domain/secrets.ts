import { maskKey } from './keys.js';

/** The secrets of a configuration that must never be written out: every API key, the admin token and the upstream key. */
export function configSecrets(config: { keys: readonly { key: string }[]; adminToken?: string | undefined; upstreamKey?: string | undefined }): string[] {
  return [...config.keys.map((k) => k.key), ...(config.adminToken ? [config.adminToken] : []), ...(config.upstreamKey ? [config.upstreamKey] : [])];
}

/**
 * A path with every secret masked. A key sent percent-encoded in the path is still the key: such a
 * path comes back decoded, and masked; any other path as it was sent.
 */
export function scrubPath(path: string, scrub: (text: string) => string): string {
  const masked = scrub(path);
  if (!path.includes('%')) return masked;
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return masked;
  }
  const maskedDecoded = scrub(decoded);
  return maskedDecoded === decoded ? masked : maskedDecoded;
}

const jsonEscaped = (s: string): string => JSON.stringify(s).slice(1, -1);

/**
 * Replaces every given secret (API keys, the admin token) by its mask, and any bearer credential by
 * `[redacted]`, so a key can leave the process only masked, whatever field carried it. With `json`, the text is
 * JSON (a log line): a secret is also looked for as JSON escapes it, and its mask is written JSON-escaped.
 */
export function secretScrubber(secrets: readonly string[], { json = true }: { json?: boolean } = {}): (text: string) => string {
  // Longest first, so a key that contains another key is masked whole.
  const long = secrets.filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
  const pairs = json ? long.flatMap((s) => [...new Set([s, jsonEscaped(s)])].map((form) => [form, jsonEscaped(maskKey(s))] as const)) : long.map((s) => [s, maskKey(s)] as const);
  return (text) => {
    let out = text;
    for (const [secret, masked] of pairs) if (out.includes(secret)) out = out.split(secret).join(masked);
    return out.replace(/(bearer\s+)[^\s"\\]{4,}/gi, '$1[redacted]');
  };
}
