import { operation } from './operations.js';

/**
 * A path the mock does not serve but that well-known clients call by default: its 404 says what to call
 * instead. These are not operations (nothing answers them but the 404, so they stay out of the operations
 * table, the OpenAPI document and the journal's operation ids); the router reads this table when it
 * answers a 404.
 */
export interface PathHint {
  /**
   * The paths as a client composes them (its base URL + its own path), each also under /v1 and with any
   * further segments (`/responses/resp_1/input_items`).
   */
  readonly paths: readonly string[];
  /** What to call instead; appended to the 404 message. */
  readonly hint: string;
}

const chat = operation('chat.completions').path;

/** The hint table. */
export const PATH_HINTS: readonly PathHint[] = [
  {
    // The Vercel AI SDK's default model, openai('gpt-4o'), posts to `${baseURL}/responses`; so does the
    // openai SDK's client.responses.create().
    paths: ['/responses', '/text-provider/responses'],
    hint:
      `This is OpenAI's Responses API, which this API does not have: use chat completions, POST ${chat} (or /v1${chat}). ` +
      "With the Vercel AI SDK, call openai.chat('gpt-4o') instead of openai('gpt-4o'), which uses the Responses API.",
  },
  {
    // A client whose base URL is the server itself, or the server + /v1, as for api.openai.com.
    paths: ['/chat/completions', '/images/generations'],
    hint: `OpenAI-style endpoints are under the text provider: set the client's base URL to <server>/text-provider (or <server>/v1/text-provider), so that chat completions go to ${chat}.`,
  },
];

// Each path as written and under /v1, longest first so that the most specific row wins.
const PREFIXES: readonly (readonly [string, string])[] = PATH_HINTS.flatMap(({ paths, hint }) =>
  paths.flatMap((p) => [[p, hint] as const, [`/v1${p}`, hint] as const]),
).sort(([a], [b]) => b.length - a.length);

/** The hint for a path nobody serves, if a known client calls it; undefined otherwise. */
export function hintFor(path: string): string | undefined {
  const bare = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  for (const [prefix, hint] of PREFIXES) if (bare === prefix || bare.startsWith(`${prefix}/`)) return hint;
  return undefined;
}
