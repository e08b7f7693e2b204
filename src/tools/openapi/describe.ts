import type { Model, ModelKind } from '../../domain/catalogue.js';

/** How the document describes one operation of the table. */
export interface OperationText {
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  /** The success status when it is not 200. */
  readonly status?: number;
  /** The model kind the operation accepts, for the per-model limits listed in its description. */
  readonly models?: ModelKind;
}

const ADMIN = 'Admin';
const EXT = 'Mock extensions';

/** The text of each operation, by table id. A table row without one fails the OpenAPI tests. */
export const OPERATION_TEXT: Readonly<Record<string, OperationText>> = {
  'chat.completions': {
    tag: 'text-provider', summary: 'Generate text with chat models', models: 'text',
    description: 'Answers with an OpenAI `chat.completion`; with `"stream": true`, with `chat.completion.chunk` server-sent events ending in `data: [DONE]`. Replies come from reply rules matched against the last user message.',
  },
  'images.generate': { tag: 'text-provider', summary: 'Generate images from a text description', models: 'image', description: 'Each URL serves a real PNG of the requested size; `response_format: "b64_json"` returns the PNG inline.' },
  'images.edit': { tag: 'image-provider', summary: 'Edit an input image with a text prompt', description: 'The image is base64 or a data URI of a PNG, JPEG, GIF or WebP image; the answer is a base64 PNG of the same width and height.' },
  'video.generate': { tag: 'video-provider', summary: 'Generate video from text or from an image', models: 'video', description: 'Answers with a task, completed at once by default; `video.url` serves a real MP4 of the requested resolution and duration.' },
  'voice.tts': { tag: 'voice-provider', summary: 'Convert text to speech', models: 'voice', description: 'Answers with a decodable MP3 whose duration grows with the text. `model_id`, when given, names one of the models below.' },
  'cloud.speech': { tag: 'cloud-provider', summary: 'Convert text to speech with SSML support', models: 'cloud-speech', description: 'Answers with RIFF WAV audio (24 kHz 16-bit mono unless `X-Microsoft-OutputFormat` asks for another format). `text` may be SSML; malformed SSML is a 400. `voice` names one of the neural voices below.' },
  me: { tag: 'Account', summary: 'Describe the calling API key', description: 'The authentication example of the API document: the key masked, its scopes, rate limit and usage. The key itself is never echoed.' },
  'models.list': { tag: EXT, summary: 'List the models the mock knows', description: 'The model catalogue in the OpenAI list shape, so SDK helpers that list models work.' },
  'video.get': { tag: EXT, summary: 'Poll a video generation task', description: 'The current state of a task created by video generation (tasks advance one step per poll when the server runs with video progress on).' },
  'media.image': { tag: EXT, summary: 'Download a generated image', description: 'The PNG behind an image URL. No key is needed, as with a signed URL.' },
  'media.video': { tag: EXT, summary: 'Download a generated video', description: 'The MP4 behind a video task URL. No key is needed, as with a signed URL.' },
  'admin.faults.list': { tag: ADMIN, summary: 'List the fault rules', description: 'In the order they are tried, each with `state: {matched, fired, remaining}`.' },
  'admin.faults.add': { tag: ADMIN, summary: 'Add a fault rule', status: 201, description: 'Adds one rule after the others; 409 when its id is taken.' },
  'admin.faults.clear': { tag: ADMIN, summary: 'Delete every fault rule' },
  'admin.faults.delete': { tag: ADMIN, summary: 'Delete one fault rule' },
  'admin.reset': { tag: ADMIN, summary: 'Reset rate limits and fault rules', description: 'Every key gets its full allowance back and every rule its first state (`times` counters, seeded generators).' },
  'admin.requests.list': { tag: ADMIN, summary: 'Read the request journal', description: 'The most recent requests, oldest first (admin calls are not recorded).' },
  'admin.requests.clear': { tag: ADMIN, summary: 'Clear the request journal' },
  'admin.rateLimits': { tag: ADMIN, summary: 'Show what each rate-limited key has left', description: 'Reading it does not count as a request.' },
  openapi: { tag: EXT, summary: 'This OpenAPI document', description: 'Generated from the operations table and the JSON Schemas the mock validates with; its server is the URL it was fetched from.' },
  health: { tag: EXT, summary: 'Health check', description: '`{"status":"ok"}` while the server accepts requests. No key; never rate-limited or faulted.' },
};

/** The tags, in the order tools show them. */
export const TAGS: readonly { name: string; description: string; extension?: true }[] = [
  { name: 'text-provider', description: 'Chat completions and image generation.' },
  { name: 'image-provider', description: 'Image editing.' },
  { name: 'video-provider', description: 'Video generation.' },
  { name: 'voice-provider', description: 'Text to speech with a voice provider\'s voices.' },
  { name: 'cloud-provider', description: 'Text to speech with neural voices and SSML.' },
  { name: 'Account', description: 'The calling key.' },
  { name: EXT, description: 'Routes the API document does not list: model list, task polling, media downloads, this document, the health check.', extension: true },
  { name: ADMIN, description: 'The mock\'s admin API: fault rules, rate limits, the request journal.', extension: true },
];

// How each per-model limit reads, in the words of the request fields it bounds.
const PHRASES: Readonly<Record<string, (v: unknown) => string>> = {
  max_n: (v) => `\`n\` at most ${String(v)}`,
  max_output_tokens: (v) => `\`max_tokens\`/\`max_completion_tokens\` at most ${String(v)}`,
  context_window: (v) => `prompt at most ${String(v)} tokens`,
  max_characters: (v) => `\`text\` at most ${String(v)} characters`,
  sizes: (v) => `sizes ${(v as string[]).join(', ')}`,
  durations: (v) => `durations ${(v as number[]).join(', ')} s`,
  resolutions: (v) => `resolutions ${(v as string[]).join(', ')}`,
  modes: (v) => `modes ${(v as string[]).join(', ')}`,
  styles: (v) => `styles ${(v as string[]).join(', ')}`,
};

/** The models of a kind, grouped by the limits they share, as a Markdown list (per-model rules a schema cannot state). */
export function modelLimits(models: readonly Model[], kind: ModelKind): string {
  const groups = new Map<string, string[]>();
  for (const m of models.filter((x) => x.kind === kind)) {
    const limits = Object.entries(m.limits).flatMap(([k, v]) => (PHRASES[k] ? [PHRASES[k](v)] : []));
    const text = limits.join('; ') || 'no further limits';
    groups.set(text, [...(groups.get(text) ?? []), `\`${m.id}\``]);
  }
  return [...groups].map(([limits, ids]) => `- ${ids.join(', ')}: ${limits}`).join('\n');
}
