import { operations, type OperationId } from '../contract/operations.js';
import { me, listModels } from '../handlers/account.js';
import {
  addFaultRule,
  clearFaultRules,
  clearRequests,
  deleteFaultRule,
  listFaultRules,
  listRateLimits,
  streamStats,
  clearStreamStats,
  listRequests,
  resetState,
  latencyView,
  updateLatency,
  resetLatency,
} from '../handlers/admin.js';
import { chatCompletions } from '../handlers/chat.js';
import { editImage } from '../handlers/imageEdit.js';
import { generateImages } from '../handlers/images.js';
import { inspectorPage, inspectorScript, inspectorStyle, journalEvents, responseBody } from '../handlers/inspector.js';
import { serveImage, serveVideo } from '../handlers/media.js';
import { health, metrics } from '../handlers/meta.js';
import { cloudSpeech, voiceTts } from '../handlers/speech.js';
import { generateVideo, getVideo } from '../handlers/video.js';
import type { BoundOperation, Handler } from '../pipeline/handler.js';

/** GET /openapi.json: the OpenAPI document of the operations table, with this server as its server URL. */
const serveOpenApi: Handler = async ({ baseUrl, services }) => {
  // Loaded on first use: serving the API never pays for the generator.
  const { openApiText } = await import('../tools/openapi/index.js');
  return { kind: 'json', body: openApiText(baseUrl, services.limits) };
};

/** The handler of each operation; a row without one, or a handler without a row, does not compile. */
const HANDLERS: Readonly<Record<OperationId, Handler>> = {
  'chat.completions': chatCompletions,
  'images.generate': generateImages,
  'images.edit': editImage,
  'video.generate': generateVideo,
  'voice.tts': voiceTts,
  'cloud.speech': cloudSpeech,
  me,
  'models.list': listModels,
  'video.get': getVideo,
  'media.image': serveImage,
  'media.video': serveVideo,
  'admin.faults.list': listFaultRules,
  'admin.faults.add': addFaultRule,
  'admin.faults.clear': clearFaultRules,
  'admin.faults.delete': deleteFaultRule,
  'admin.reset': resetState,
  'admin.requests.list': listRequests,
  'admin.requests.clear': clearRequests,
  'admin.rateLimits': listRateLimits,
  'admin.streams': streamStats,
  'admin.streams.clear': clearStreamStats,
  'admin.latency': latencyView,
  'admin.latency.update': updateLatency,
  'admin.latency.reset': resetLatency,
  'admin.requests.events': journalEvents,
  'admin.requests.body': responseBody,
  'admin.inspector': inspectorPage,
  'admin.inspector.script': inspectorScript,
  'admin.inspector.style': inspectorStyle,
  openapi: serveOpenApi,
  health,
  metrics,
};

/** Every row of the operations table with its handler: the only place handlers meet operations. */
export const boundOperations: readonly BoundOperation[] = operations.map((op) => ({
  ...op,
  handler: HANDLERS[op.id as OperationId],
}));
