import { maskKey } from '../../domain/keys.js';

/** Headers as shown in reports: the Authorization token masked (sk-a...wxyz), everything else as sent. */
export function maskHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'authorization') out[name] = value;
    else {
      const space = value.indexOf(' ');
      const token = space < 0 ? '' : value.slice(space + 1);
      out[name] = token ? `${value.slice(0, space)} ${maskKey(token)}` : value;
    }
  }
  return out;
}

/** Replaces every occurrence of each secret in a text by its masked form: the last guard before output. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join(maskKey(secret));
  return out;
}

/** A body as shown in reports: long strings cut to their start and length, so a failure stays readable. */
export function shortBody(body: unknown): unknown {
  if (typeof body === 'string') return body.length > 80 ? `${body.slice(0, 40)}... (${[...body].length} characters)` : body;
  if (Array.isArray(body)) return body.map(shortBody);
  if (body && typeof body === 'object') return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, shortBody(v)]));
  return body;
}
