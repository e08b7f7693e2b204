import { maskKey } from './keys.js';

/**
 * The secrets of a configuration that must never be written out: every API key, the admin token and the upstream key.
 */
export function configSecrets(config: {
  keys: readonly { key: string }[];
  adminToken?: string | undefined;
  upstreamKey?: string | undefined;
}): string[] {
  return [
    ...config.keys.map((k) => k.key),
    ...(config.adminToken ? [config.adminToken] : []),
    ...(config.upstreamKey ? [config.upstreamKey] : []),
  ];
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
 * With `bearer: false`, other bearer credentials are left as they are (texts that say `Bearer YOUR_KEY`).
 * Secrets shorter than 4 characters are not looked for: masking them would mangle ordinary text.
 */
export function secretScrubber(
  secrets: readonly string[],
  { json = true, bearer = true }: { json?: boolean; bearer?: boolean } = {},
): (text: string) => string {
  // Longest first, so a key that contains another key is masked whole.
  const long = secrets.filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
  const pairs = json
    ? long.flatMap((s) => [...new Set([s, jsonEscaped(s)])].map((form) => [form, jsonEscaped(maskKey(s))] as const))
    : long.map((s) => [s, maskKey(s)] as const);
  return (text) => {
    let out = text;
    for (const [secret, masked] of pairs) if (out.includes(secret)) out = out.split(secret).join(masked);
    return bearer ? out.replace(/(bearer\s+)[^\s"\\]{4,}/gi, '$1[redacted]') : out;
  };
}

/**
 * The mask for what goes back to a client: error envelopes, echoed headers, quoted prompts. Every
 * configured secret (API keys, the admin token) becomes its mask, with the journal's and the logs' own
 * scrubber; a text without a secret costs one `includes` per secret form.
 */
export interface EchoMask {
  /** A JSON text (an error envelope): a secret is also found as JSON escapes it. */
  json(text: string): string;
  /** A plain text: a header value, a quoted prompt, a field name. */
  text(text: string): string;
  /** Whether a plain text holds a secret (a request id or a Host to be replaced rather than echoed). */
  holds(text: string): boolean;
}

/** The echo mask of a configuration's secrets (configSecrets). */
export function echoMask(secrets: readonly string[]): EchoMask {
  const json = secretScrubber(secrets, { json: true, bearer: false });
  const text = secretScrubber(secrets, { json: false, bearer: false });
  return { json, text, holds: (t) => text(t) !== t };
}
