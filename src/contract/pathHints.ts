import { operation } from './operations.js';

/**
 * A path the mock does not serve but that well-known clients call by default: its 404 says what to call
 * instead. These are not operations (nothing answers them but the 404, so they stay out of the operations
 * table, the OpenAPI document and the journal's operation ids); the router reads this table when it
 * answers a 404.
 */
interface PathHint {
  /**
   * The paths as a client composes them (its base URL + its own path), each also under /v1 and with any
   * further segments (`/responses/resp_1/input_items`).
   */
  readonly paths: readonly string[];
  /** What to call instead; appended to the 404 message. */
  readonly hint: string;
}

const chat = operation('chat.completions').path;
const tts = operation('voice.tts').path;
const speech = operation('cloud.speech').path;
const edit = operation('images.edit').path;

/** An OpenAI SDK path as the SDK composes it from the base URL this API's docs give (`<server>/text-provider`), and
 * from the server itself. */
const sdk = (path: string) => [path, `/text-provider${path}`];
/** The hint of an OpenAI endpoint this API has nothing like. */
const none = (what: string) =>
  `This API has no ${what}: it offers chat completions (POST ${chat}), images, video and speech (GET /openapi.json lists every path).`;

/** The hint table. */
const PATH_HINTS: readonly PathHint[] = [
  {
    // The Vercel AI SDK's default model, openai('gpt-4o'), posts to `${baseURL}/responses`; so does the
    // openai SDK's client.responses.create().
    paths: ['/responses', '/text-provider/responses'],
    hint:
      `This is OpenAI's Responses API, which this API does not have: use chat completions, POST ${chat} (or /v1${chat}). ` +
      "With the Vercel AI SDK, call openai.chat('gpt-4o') instead of openai('gpt-4o'), which uses the Responses API.",
  },
  {
    // The openai SDK's client.audio.speech.create().
    paths: sdk('/audio/speech'),
    hint: `This API has no /audio/speech: text to speech is POST ${tts} (a voice_id and the text; MP3 and other formats) or POST ${speech} (SSML, Azure-style).`,
  },
  { paths: [...sdk('/audio/transcriptions'), ...sdk('/audio/translations')], hint: none('speech to text') },
  { paths: sdk('/embeddings'), hint: none('embeddings') },
  { paths: sdk('/moderations'), hint: none('moderations') },
  { paths: [...sdk('/files'), ...sdk('/batches'), ...sdk('/uploads')], hint: none('files or batches') },
  {
    // The legacy completions endpoint (client.completions.create()).
    paths: sdk('/completions'),
    hint: `This API has no legacy completions endpoint: use chat completions, POST ${chat} (or /v1${chat}).`,
  },
  {
    paths: sdk('/images/edits'),
    hint: `Image edits are POST ${edit} here (a JSON body with the image in base64), not OpenAI's multipart /images/edits.`,
  },
  { paths: sdk('/images/variations'), hint: none('image variations') },
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
