import { addFaultRule, clearFaultRules, clearRequests, deleteFaultRule, listFaultRules, listRateLimits, listRequests, resetState } from '../handlers/admin.js';
import { me, listModels } from '../handlers/account.js';
import { chatCompletions } from '../handlers/chat.js';
import { editImage } from '../handlers/imageEdit.js';
import { generateImages } from '../handlers/images.js';
import { serveImage, serveVideo } from '../handlers/media.js';
import { health, serveOpenApi } from '../handlers/meta.js';
import { cloudSpeech, voiceTts } from '../handlers/speech.js';
import { generateVideo, getVideo } from '../handlers/video.js';
import { schemaId } from './schemas.js';
import type { Handler } from './types.js';

/** One row of the operations table. */
export interface Operation {
  /** Stable id used in logs, the journal, fault rules and conformance cases. */
  readonly id: string;
  readonly method: 'GET' | 'POST' | 'DELETE';
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
  /** What a success looks like: a response schema `$id` or a media type. */
  readonly success: { readonly schema?: string; readonly contentType: string };
  /** False for routes that tooling relies on (health check, OpenAPI document): no fault header or rule applies. */
  readonly faultable?: false;
  readonly handler: Handler;
}

const json = (file: string) => ({ schema: schemaId(file), contentType: 'application/json' });
const admin = { contentType: 'application/json' };

/**
 * The single source of truth: every route the mock serves. The router, validation, the docs and the
 * conformance target list are derived from it; no route is registered anywhere else.
 */
export const operations: readonly Operation[] = [
  { id: 'chat.completions', method: 'POST', path: '/text-provider/chat/completions', documented: true, auth: 'key', requestSchema: schemaId('chat-request.json'), success: json('chat-completion.json'), handler: chatCompletions },
  { id: 'images.generate', method: 'POST', path: '/text-provider/images/generations', documented: true, auth: 'key', requestSchema: schemaId('image-generation-request.json'), success: json('images-response.json'), handler: generateImages },
  { id: 'images.edit', method: 'POST', path: '/image-provider/image-edit', documented: true, auth: 'key', requestSchema: schemaId('image-edit-request.json'), success: json('image-edit-response.json'), handler: editImage },
  { id: 'video.generate', method: 'POST', path: '/video-provider/generate', documented: true, auth: 'key', requestSchema: schemaId('video-request.json'), success: json('video-task.json'), handler: generateVideo },
  { id: 'voice.tts', method: 'POST', path: '/voice-provider/tts', documented: true, auth: 'key', requestSchema: schemaId('voice-tts-request.json'), success: { contentType: 'audio/mpeg' }, handler: voiceTts },
  { id: 'cloud.speech', method: 'POST', path: '/cloud-provider/speech', documented: true, auth: 'key', requestSchema: schemaId('cloud-speech-request.json'), success: { contentType: 'audio/wav' }, handler: cloudSpeech },
  { id: 'me', method: 'GET', path: '/v1/me', documented: true, auth: 'key', success: json('me.json'), handler: me },
  // Extensions the API document does not list.
  { id: 'models.list', method: 'GET', path: '/v1/models', aliases: ['/text-provider/models'], documented: false, auth: 'key', success: json('models-list.json'), handler: listModels },
  { id: 'video.get', method: 'GET', path: '/video-provider/generate/:id', documented: false, auth: 'key', success: json('video-task.json'), handler: getVideo },
  { id: 'media.image', method: 'GET', path: '/media/images/:size/:file', documented: false, auth: 'none', success: { contentType: 'image/png' }, handler: serveImage },
  { id: 'media.video', method: 'GET', path: '/media/videos/:resolution/:duration/:file', documented: false, auth: 'none', success: { contentType: 'video/mp4' }, handler: serveVideo },
  // The admin API: fault rules, rate-limit and rule state, the request journal (loopback or admin token).
  { id: 'admin.faults.list', method: 'GET', path: '/__admin/faults', documented: false, auth: 'admin', success: admin, handler: listFaultRules },
  { id: 'admin.faults.add', method: 'POST', path: '/__admin/faults', documented: false, auth: 'admin', requestSchema: schemaId('admin-fault-rule-request.json'), success: admin, handler: addFaultRule },
  { id: 'admin.faults.clear', method: 'DELETE', path: '/__admin/faults', documented: false, auth: 'admin', success: admin, handler: clearFaultRules },
  { id: 'admin.faults.delete', method: 'DELETE', path: '/__admin/faults/:id', documented: false, auth: 'admin', success: admin, handler: deleteFaultRule },
  { id: 'admin.reset', method: 'POST', path: '/__admin/reset', documented: false, auth: 'admin', success: admin, handler: resetState },
  { id: 'admin.requests.list', method: 'GET', path: '/__admin/requests', documented: false, auth: 'admin', success: admin, handler: listRequests },
  { id: 'admin.requests.clear', method: 'DELETE', path: '/__admin/requests', documented: false, auth: 'admin', success: admin, handler: clearRequests },
  { id: 'admin.rateLimits', method: 'GET', path: '/__admin/rate-limits', documented: false, auth: 'admin', success: admin, handler: listRateLimits },
  // For tooling: the OpenAPI document of this table, and a health check for containers and orchestrators.
  { id: 'openapi', method: 'GET', path: '/openapi.json', documented: false, auth: 'none', faultable: false, success: { contentType: 'application/json' }, handler: serveOpenApi },
  { id: 'health', method: 'GET', path: '/__health', documented: false, auth: 'none', faultable: false, success: { contentType: 'application/json' }, handler: health },
];

/** Whether fault headers and fault rules apply to an operation: never to the admin API or tooling routes. */
export const faultable = (op: Operation): boolean => op.auth !== 'admin' && op.faultable !== false;

/** Every path an operation answers on: as written, its aliases, and each under /v1 unless it has it already. */
export function pathsOf(op: Operation): string[] {
  const written = [op.path, ...(op.aliases ?? [])];
  return [...written, ...written.filter((p) => !p.startsWith('/v1/') && !p.startsWith('/__')).map((p) => `/v1${p}`)];
}

/** The operation for an id; throws for an unknown id. */
export function operation(id: string): Operation {
  const op = operations.find((o) => o.id === id);
  if (!op) throw new Error(`unknown operation ${id}`);
  return op;
}
