// For gateways that serve the API their own way: an operation mounted at another path (--route), and
// headers every request must carry (--header), such as a routing header that names the provider.
import { operation, operations } from '../../contract/operations.js';
import { UsageError } from '../../verdict/commandLine.js';
import { RARE_SECRET } from './mask.js';

const documented = (): string[] => operations.filter((op) => op.documented).map((op) => op.id);

// A path as --path-prefix takes it: from the root, no query, no blanks.
const PATH = /^\/[\w.~%@:/-]*$/;

/** The --route values (OPERATION=PATH) as the path each documented operation is served at, by operation id. */
export function parseRoutes(values: readonly string[]): Record<string, string> {
  const routes: Record<string, string> = {};
  for (const value of values) {
    const eq = value.indexOf('=');
    const id = eq < 0 ? value : value.slice(0, eq);
    const path = eq < 0 ? '' : value.slice(eq + 1);
    if (!documented().includes(id))
      throw new UsageError(
        `--route must be OPERATION=PATH, with OPERATION one of ${documented().join(', ')}; got '${value}'`,
      );
    if (!PATH.test(path))
      throw new UsageError(
        `--route ${id}=PATH needs a path that starts with '/' (no query), e.g. ${id}=/v1/chat/completions; got '${path}'`,
      );
    routes[id] = path;
  }
  return routes;
}

// An HTTP field name (RFC 9110 token) and a value without control characters.
const NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const VALUE = /^[^\u0000-\u0008\u000a-\u001f\u007f]*$/;

// A word of a header name that says it carries a credential (x-api-key, x-auth-token, x-portkey-virtual-key; not
// x-portkey-provider).
const SECRET_WORD =
  /^((api)?keys?|tokens?|secrets?|auth(orization|entication)?|pass(word|wd)?|credentials?|cookies?|session(id)?|signature|sig)$/i;

/** A text that looks random: 16 characters or more without blanks, with letters and digits. */
const looksRandom = (text: string): boolean =>
  text.length >= 16 && !/\s/.test(text) && /\d/.test(text) && /[a-z]/i.test(text);

/**
 * Whether an http(s) URL carries a credential: user information, or a host label, path segment or query value
 * that looks random. Taken whole, every URL with a port or an address looks random; the runner would mask a
 * gateway's upstream address (Portkey's x-portkey-custom-host), and with it the start of the --base-url in every
 * report, since both begin alike.
 */
function urlLooksSecret(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return looksRandom(value);
  }
  const pieces = [
    ...url.hostname.split('.'),
    ...url.pathname.split('/'),
    ...[...url.searchParams].flat(),
    url.hash.slice(1),
  ];
  return url.username !== '' || url.password !== '' || pieces.some(looksRandom);
}

/**
 * Whether a --header value must be masked like the key: a word of its header's name says it carries a
 * credential, or the value looks random (16 characters or more without blanks, with letters and digits; for an
 * http(s) URL, one of its parts does, or it has user information).
 */
export const looksSecret = (name: string, value: string): boolean =>
  name.split(/[-_.]/).some((word) => SECRET_WORD.test(word)) ||
  (/^https?:\/\//i.test(value) ? urlLooksSecret(value) : looksRandom(value));

/** The --header values (NAME:VALUE) by lower-case name. Authorization is --api-key's; a value is never quoted in an
 * error, in case it is a secret. */
export function parseHeaders(values: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const value of values) {
    const colon = value.indexOf(':');
    const name = (colon < 0 ? value : value.slice(0, colon)).trim();
    if (colon < 0 || !NAME.test(name))
      throw new UsageError(
        `--header must be NAME:VALUE (e.g. x-portkey-provider:openai); got one whose name is '${name}'`,
      );
    if (name.toLowerCase() === 'authorization')
      throw new UsageError(
        '--header may not set Authorization: the runner sends the key as a bearer token itself (use --api-key)',
      );
    const text = value.slice(colon + 1).trim();
    if (!VALUE.test(text)) throw new UsageError(`--header ${name}: the value has a control character`);
    headers[name.toLowerCase()] = text;
  }
  return headers;
}

/** The --route paths by the document's path (as a target takes them), from the paths by operation id. */
export const routesByPath = (routes: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(routes).map(([id, path]) => [operation(id).path, path]));

/**
 * The --header values every report masks like the key: those that look secret (looksSecret), and those that hold the
 * key, whatever their name (a key too short to be rare is no evidence).
 */
export const secretHeaderValues = (headers: Readonly<Record<string, string>>, apiKey: string): string[] =>
  Object.entries(headers)
    .filter(([name, value]) => looksSecret(name, value) || (apiKey.length >= RARE_SECRET && value.includes(apiKey)))
    .map(([, value]) => value);
