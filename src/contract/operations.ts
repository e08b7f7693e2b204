import { schemaId } from './schemas.js';

/** What a model does; each endpoint that takes a `model` accepts one kind. */
export type ModelKind = 'text' | 'image' | 'video' | 'voice' | 'cloud-speech';

/** The paid unit a successful request of an operation costs, as providers bill it. */
export interface Billing {
  readonly unit: 'tokens' | 'images' | 'videoSeconds' | 'characters';
  /** The request field that sets the amount (a count, or the text whose characters are billed); none: one unit. */
  readonly field?: string;
}

/** What a success looks like. */
export interface Success {
  /** The success status when it is not 200. */
  readonly status?: number;
  readonly contentType: string;
  /** `$id` of the response schema of a JSON success. */
  readonly schema?: string;
  /** A JSON success without a schema file: its schema, inline (the tooling routes' fixed answers). */
  readonly inline?: Readonly<Record<string, unknown>>;
  /** True when `"stream": true` turns the answer into chat.completion.chunk server-sent events. */
  readonly streams?: true;
  /**
   * The media a success delivers, inline or behind a URL: `png` (of the requested `size`, or with
   * `sizeFrom: 'input'` the input image's size), `mp4`, or `audio`.
   */
  readonly media?: 'png' | 'mp4' | 'audio';
  readonly sizeFrom?: 'input';
  /** Where a JSON success echoes the request's `seed` (a JSON pointer), when the request sets one. */
  readonly seedAt?: string;
  /**
   * True when the body is also served in part: one byte range (`Range: bytes=a-b`, `a-` or `-n`) is a 206
   * with `Content-Range`, a range past the end a 416, and the 200 says `Accept-Ranges: bytes`.
   */
  readonly ranges?: true;
}

/**
 * What a latency profile does to an operation: `model` is the body field naming the catalogue model whose profile
 * and slots the request takes (a request without it answers at once); `timing` is how the answer waits: `tokens`
 * (chat: time to first token, prefill and a gap per token), `duration` (media: one drawn duration), `task` (video:
 * the task answers at once and its status follows the drawn duration).
 */
export interface Latency {
  readonly model: string;
  readonly timing: 'tokens' | 'duration' | 'task';
  /** True where the body's text may name another model than the field (SSML's voice wins over `voice`): the handler
   * checks the one it uses, and the request plan takes the field's only when the catalogue has it. */
  readonly textMayOverride?: true;
}

/** How the OpenAPI document and the docs present an operation. */
interface OperationDoc {
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  /** The model kind whose catalogue limits the description lists. */
  readonly models?: ModelKind;
  /** True when the description lists the voice provider's voices. */
  readonly voices?: true;
}

/** One row of the operations table: data only; app/ binds each row to its handler. */
export interface Operation {
  /** Stable id used in logs, the journal, fault rules and conformance cases. */
  readonly id: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path as the API document writes it (router syntax for parameters). */
  readonly path: string;
  /** Further paths that serve the same operation. */
  readonly aliases?: readonly string[];
  /** True for the seven operations of the API document; false for the mock's extensions. */
  readonly documented: boolean;
  /** `key`: a bearer API key; `none`: public (media links); `admin`: the admin API's own rule. */
  readonly auth: 'key' | 'none' | 'admin';
  /** `$id` of the request body schema, for operations that take a body. */
  readonly requestSchema?: string;
  readonly success: Success;
  /** Error statuses the operation answers with besides those every operation of its kind has (auth, body, faults). */
  readonly errors?: readonly number[];
  /** Control headers the operation reads besides the fault headers, as documented. */
  readonly headers?: readonly string[];
  /** False for routes that tooling relies on (health check, OpenAPI document): no fault header or rule applies. */
  readonly faultable?: false;
  /** A probe (the health check, a metrics scrape): kept out of the journal and logged at debug while it succeeds. */
  readonly probe?: true;
  /** The paid work a success is; none for free operations. */
  readonly billing?: Billing;
  /** True when the operation's requests count their tokens against a key's tokens-per-minute limit. */
  readonly countsTokens?: true;
  /** How a latency profile times the operation (docs/load-testing.md); none: it always answers at once. An operation
   * with one lists X-Mock-Pacing in `headers`: the header times its answer. */
  readonly latency?: Latency;
  readonly doc: OperationDoc;
}

const json = (file: string): Success => ({ schema: schemaId(file), contentType: 'application/json' });
const admin: Success = { contentType: 'application/json' };
const ADMIN = 'Admin';
const EXT = 'Mock extensions';

/**
 * The rows of the operations table, the single source of truth: every route the mock serves, as data. The router,
 * validation, rate
 * limits, the journal, the OpenAPI document and the conformance target list are derived from it; no
 * route is registered anywhere else.
 */
const ROWS = [
  {
    id: 'chat.completions',
    method: 'POST',
    path: '/text-provider/chat/completions',
    documented: true,
    auth: 'key',
    requestSchema: schemaId('chat-request.json'),
    success: { ...json('chat-completion.json'), streams: true },
    headers: ['X-Mock-Pacing', 'X-Mock-Reply-Rule'],
    billing: { unit: 'tokens', field: 'max_tokens' },
    countsTokens: true,
    latency: { model: 'model', timing: 'tokens' },
    doc: {
      tag: 'text-provider',
      summary: 'Generate text with chat models',
      models: 'text',
      description:
        'Answers with an OpenAI `chat.completion`; with `"stream": true`, with `chat.completion.chunk` server-sent events ending in `data: [DONE]`. Replies come from reply rules matched against the last user message.',
    },
  },
  {
    id: 'images.generate',
    method: 'POST',
    path: '/text-provider/images/generations',
    documented: true,
    auth: 'key',
    requestSchema: schemaId('image-generation-request.json'),
    success: { ...json('images-response.json'), media: 'png' },
    headers: ['X-Mock-Pacing'],
    billing: { unit: 'images', field: 'n' },
    latency: { model: 'model', timing: 'duration' },
    doc: {
      tag: 'text-provider',
      summary: 'Generate images from a text description',
      models: 'image',
      description:
        'Each URL serves a real PNG of the requested size; `response_format: "b64_json"` returns the PNG inline. Without `response_format` each model answers in its own default format, listed below (`gpt-image-1`: always `b64_json`, and it does not accept the field).',
    },
  },
  {
    id: 'images.edit',
    method: 'POST',
    path: '/image-provider/image-edit',
    documented: true,
    auth: 'key',
    requestSchema: schemaId('image-edit-request.json'),
    success: { ...json('image-edit-response.json'), media: 'png', sizeFrom: 'input', seedAt: '/seed' },
    billing: { unit: 'images' },
    doc: {
      tag: 'image-provider',
      summary: 'Edit an input image with a text prompt',
      description:
        'The image is base64 or a data URI of a PNG, JPEG, GIF or WebP image; the answer is a base64 PNG of the same width and height.',
    },
  },
  {
    id: 'video.generate',
    method: 'POST',
    path: '/video-provider/generate',
    documented: true,
    auth: 'key',
    requestSchema: schemaId('video-request.json'),
    success: { ...json('video-task.json'), media: 'mp4', seedAt: '/video/seed' },
    headers: ['X-Mock-Pacing'],
    billing: { unit: 'videoSeconds', field: 'duration' },
    latency: { model: 'model', timing: 'task' },
    doc: {
      tag: 'video-provider',
      summary: 'Generate video from text or from an image',
      models: 'video',
      description:
        'Answers with a task, completed at once by default; `video.url` serves a real MP4 of the requested resolution and duration.',
    },
  },
  {
    id: 'voice.tts',
    method: 'POST',
    path: '/voice-provider/tts',
    documented: true,
    auth: 'key',
    requestSchema: schemaId('voice-tts-request.json'),
    success: { contentType: 'audio/mpeg', media: 'audio' },
    headers: ['X-Mock-Pacing'],
    billing: { unit: 'characters', field: 'text' },
    latency: { model: 'model_id', timing: 'duration' },
    doc: {
      tag: 'voice-provider',
      summary: 'Convert text to speech',
      models: 'voice',
      voices: true,
      description:
        'Answers with a decodable MP3 whose duration grows with the text. `model_id`, when given, names one of the models below.',
    },
  },
  {
    id: 'cloud.speech',
    method: 'POST',
    path: '/cloud-provider/speech',
    documented: true,
    auth: 'key',
    requestSchema: schemaId('cloud-speech-request.json'),
    success: { contentType: 'audio/wav', media: 'audio' },
    headers: ['X-Microsoft-OutputFormat', 'X-Mock-Pacing'],
    billing: { unit: 'characters', field: 'text' },
    latency: { model: 'voice', timing: 'duration', textMayOverride: true },
    doc: {
      tag: 'cloud-provider',
      summary: 'Convert text to speech with SSML support',
      models: 'cloud-speech',
      description:
        'Answers with RIFF WAV audio (24 kHz 16-bit mono unless `X-Microsoft-OutputFormat` asks for another format). `text` may be SSML; malformed SSML is a 400. `voice` names one of the neural voices below.',
    },
  },
  {
    id: 'me',
    method: 'GET',
    path: '/v1/me',
    documented: true,
    auth: 'key',
    success: json('me.json'),
    doc: {
      tag: 'Account',
      summary: 'Describe the calling API key',
      description:
        'The authentication example of the API document: the key masked, its scopes, rate limit and usage. The key itself is never echoed.',
    },
  },
  // Extensions the API document does not list.
  {
    id: 'models.list',
    method: 'GET',
    path: '/v1/models',
    aliases: ['/text-provider/models'],
    documented: false,
    auth: 'key',
    success: json('models-list.json'),
    doc: {
      tag: EXT,
      summary: 'List the models the mock knows',
      description: 'The model catalogue in the OpenAI list shape, so SDK helpers that list models work.',
    },
  },
  {
    id: 'video.get',
    method: 'GET',
    path: '/video-provider/generate/:id',
    documented: false,
    auth: 'key',
    success: json('video-task.json'),
    doc: {
      tag: EXT,
      summary: 'Poll a video generation task',
      description:
        'The current state of a task created by video generation (tasks advance one step per poll when the server runs with video progress on).',
    },
  },
  {
    id: 'media.image',
    method: 'GET',
    path: '/media/images/:size/:file',
    documented: false,
    auth: 'none',
    success: { contentType: 'image/png', ranges: true },
    doc: {
      tag: EXT,
      summary: 'Download a generated image',
      description:
        'The PNG behind an image URL. No key is needed, as with a signed URL. One byte range is answered 206, as by a CDN.',
    },
  },
  {
    id: 'media.video',
    method: 'GET',
    path: '/media/videos/:resolution/:duration/:file',
    documented: false,
    auth: 'none',
    success: { contentType: 'video/mp4', ranges: true },
    doc: {
      tag: EXT,
      summary: 'Download a generated video',
      description:
        'The MP4 behind a video task URL. No key is needed, as with a signed URL. One byte range is answered 206, so that a player can seek.',
    },
  },
  // The admin API: fault rules, rate-limit and rule state, the request journal (loopback or admin token).
  {
    id: 'admin.faults.list',
    method: 'GET',
    path: '/__admin/faults',
    documented: false,
    auth: 'admin',
    success: admin,
    doc: {
      tag: ADMIN,
      summary: 'List the fault rules',
      description: 'In the order they are tried, each with `state: {matched, fired, remaining}`.',
    },
  },
  {
    id: 'admin.faults.add',
    method: 'POST',
    path: '/__admin/faults',
    documented: false,
    auth: 'admin',
    requestSchema: schemaId('admin-fault-rule-request.json'),
    success: { ...admin, status: 201 },
    errors: [409],
    doc: {
      tag: ADMIN,
      summary: 'Add a fault rule',
      description: 'Adds one rule after the others; 409 when its id is taken.',
    },
  },
  {
    id: 'admin.faults.clear',
    method: 'DELETE',
    path: '/__admin/faults',
    documented: false,
    auth: 'admin',
    success: admin,
    doc: { tag: ADMIN, summary: 'Delete every fault rule' },
  },
  {
    id: 'admin.faults.delete',
    method: 'DELETE',
    path: '/__admin/faults/:id',
    documented: false,
    auth: 'admin',
    success: admin,
    doc: { tag: ADMIN, summary: 'Delete one fault rule' },
  },
  {
    id: 'admin.reset',
    method: 'POST',
    path: '/__admin/reset',
    documented: false,
    auth: 'admin',
    success: admin,
    doc: {
      tag: ADMIN,
      summary: 'Reset rate limits and fault rules',
      description:
        'Every key gets its full allowance back and every rule its first state (`times` counters, seeded generators).',
    },
  },
  {
    id: 'admin.requests.list',
    method: 'GET',
    path: '/__admin/requests',
    documented: false,
    auth: 'admin',
    success: admin,
    doc: {
      tag: ADMIN,
      summary: 'Read the request journal',
      description: 'The most recent requests, oldest first (admin calls are not recorded).',
    },
  },
  {
    id: 'admin.requests.clear',
    method: 'DELETE',
    path: '/__admin/requests',
    documented: false,
    auth: 'admin',
    success: admin,
    doc: { tag: ADMIN, summary: 'Clear the request journal' },
  },
  {
    id: 'admin.rateLimits',
    method: 'GET',
    path: '/__admin/rate-limits',
    documented: false,
    auth: 'admin',
    success: admin,
    doc: {
      tag: ADMIN,
      summary: 'Show what each rate-limited key has left',
      description: 'Reading it does not count as a request.',
    },
  },
  {
    id: 'admin.streams',
    method: 'GET',
    path: '/__admin/streams',
    documented: false,
    auth: 'admin',
    success: admin,
    doc: {
      tag: ADMIN,
      summary: "Show the streams' lateness",
      description:
        "How many streams are open and have started, and how late this instance wrote their paced events against their schedules (p50, p99, max in ms), the first event of each stream apart: a load test's way to tell the mock's lateness from the gateway's.",
    },
  },
  {
    id: 'admin.streams.clear',
    method: 'DELETE',
    path: '/__admin/streams',
    documented: false,
    auth: 'admin',
    success: admin,
    doc: {
      tag: ADMIN,
      summary: "Clear the streams' lateness figures",
      description: 'Between two runs of a load test.',
    },
  },
  {
    id: 'admin.latency',
    method: 'GET',
    path: '/__admin/latency',
    documented: false,
    auth: 'admin',
    success: admin,
    doc: {
      tag: ADMIN,
      summary: 'Show the latency settings in force',
      description:
        "The global profile, the seed and how many requests drew from it, every profile with its figures worked out (mean, p50, p99 of each distribution), and each catalogue model's profile, where it came from and its running and waiting requests on this instance (docs/load-testing.md).",
    },
  },
  {
    id: 'admin.latency.update',
    method: 'PUT',
    path: '/__admin/latency',
    documented: false,
    auth: 'admin',
    requestSchema: schemaId('admin-latency-request.json'),
    success: admin,
    doc: {
      tag: ADMIN,
      summary: 'Change the latency settings',
      description:
        'Each field given replaces the one in force from the next request on: a global profile, a seed (the draws start again), profiles added or replaced, a profile per model (null takes it away). A name that is not a profile is a 400 naming the field, and nothing changes.',
    },
  },
  {
    id: 'admin.latency.reset',
    method: 'DELETE',
    path: '/__admin/latency',
    documented: false,
    auth: 'admin',
    success: admin,
    doc: {
      tag: ADMIN,
      summary: 'Go back to the configured latency settings',
      description: 'The settings of the configuration, the draws from the start of its seed.',
    },
  },
  {
    id: 'admin.requests.events',
    method: 'GET',
    path: '/__admin/requests/events',
    documented: false,
    auth: 'admin',
    faultable: false,
    success: { contentType: 'text/event-stream' },
    doc: {
      tag: ADMIN,
      summary: 'Follow the request journal live',
      description:
        'Server-sent events: one `entry` event per request the journal records from now on, its data the entry as JSON.',
    },
  },
  {
    id: 'admin.requests.body',
    method: 'GET',
    path: '/__admin/requests/:id/body',
    documented: false,
    auth: 'admin',
    faultable: false,
    success: { contentType: 'application/octet-stream', ranges: true },
    doc: {
      tag: ADMIN,
      summary: 'Read the body a request was answered with',
      description:
        'The bytes of a recent binary answer (speech, an image or video download) or a JSON answer longer than the journal keeps (16 KiB, `records.maxResponseBodyChars` in fixtures/limits.json), with the Content-Type it was sent with; text is masked. Bodies are held by request id, at most 32 MiB in all (`records.maxHeldResponseBytes`), the oldest going first: 404 once one has gone. One byte range is answered 206, so that a media player can seek; several ranges, another unit, a malformed `Range` or any `If-Range` get the whole body (200).',
    },
  },
  {
    id: 'metrics',
    method: 'GET',
    path: '/metrics',
    documented: false,
    auth: 'admin',
    faultable: false,
    // A scrape every few seconds is a probe: kept out of the journal, logged at debug.
    probe: true,
    success: { contentType: 'text/plain' },
    doc: {
      tag: ADMIN,
      summary: 'Metrics in Prometheus text format',
      description:
        "Requests by operation, status and fault; running and waiting requests and tokens per model; histograms of time to first token, inter-token latency, end-to-end latency and the streams' lateness; the process's own figures. The `metrics` setting names them as the mock does, as vLLM does, or both; `off` removes the route (docs/load-testing.md#metrics). On the API's port, under the admin rule, as vLLM serves it.",
    },
  },
  // The request inspector: a page in the browser that uses only the admin API above (docs/inspector.md).
  {
    id: 'admin.inspector',
    method: 'GET',
    path: '/__admin/',
    aliases: ['/__admin'],
    documented: false,
    auth: 'admin',
    faultable: false,
    success: { contentType: 'text/html' },
    doc: {
      tag: ADMIN,
      summary: 'The request inspector page',
      description: 'The live journal, one request opened, fault rules and rate limits, in the browser.',
    },
  },
  {
    id: 'admin.inspector.script',
    method: 'GET',
    path: '/__admin/inspector.js',
    documented: false,
    auth: 'admin',
    faultable: false,
    success: { contentType: 'text/javascript' },
    doc: { tag: ADMIN, summary: "The request inspector's script" },
  },
  {
    id: 'admin.inspector.style',
    method: 'GET',
    path: '/__admin/inspector.css',
    documented: false,
    auth: 'admin',
    faultable: false,
    success: { contentType: 'text/css' },
    doc: { tag: ADMIN, summary: "The request inspector's stylesheet" },
  },
  // For tooling: the OpenAPI document of this table, and a health check for containers and orchestrators.
  {
    id: 'openapi',
    method: 'GET',
    path: '/openapi.json',
    documented: false,
    auth: 'none',
    faultable: false,
    success: {
      contentType: 'application/json',
      inline: { type: 'object', description: 'An OpenAPI 3.1 document (this one).' },
    },
    doc: {
      tag: EXT,
      summary: 'This OpenAPI document',
      description:
        'Generated from the operations table and the JSON Schemas the mock validates with; its server is the URL it was fetched from.',
    },
  },
  {
    id: 'health',
    method: 'GET',
    path: '/__health',
    documented: false,
    auth: 'none',
    faultable: false,
    probe: true,
    success: {
      contentType: 'application/json',
      inline: { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } },
    },
    doc: {
      tag: EXT,
      summary: 'Health check',
      description: '`{"status":"ok"}` while the server accepts requests. No key; never rate-limited or faulted.',
    },
  },
] as const satisfies readonly Operation[];

/** The id of one row of the table. */
export type OperationId = (typeof ROWS)[number]['id'];

/** The table: every route the mock serves, in the order the router tries them. */
export const operations: readonly Operation[] = ROWS;

const byId: ReadonlyMap<string, Operation> = new Map(operations.map((op) => [op.id, op]));

/** Whether fault headers and fault rules apply to an operation: never to the admin API or tooling routes. */
export const faultable = (op: Operation): boolean => op.auth !== 'admin' && op.faultable !== false;

/** Every path an operation answers on: as written, its aliases, and each under /v1 unless it has it already. */
export function pathsOf(op: Operation): string[] {
  const written = [op.path, ...(op.aliases ?? [])];
  return [...written, ...written.filter((p) => !p.startsWith('/v1/') && !p.startsWith('/__')).map((p) => `/v1${p}`)];
}

/** The operation for an id; throws for an unknown id. */
export function operation(id: string): Operation {
  const op = byId.get(id);
  if (!op) throw new Error(`unknown operation ${id}`);
  return op;
}

/** The operation for an id, or undefined (ids in records and reports come from outside the table too). */
export const findOperation = (id: string | undefined): Operation | undefined =>
  id === undefined ? undefined : byId.get(id);
