import type { Model } from '../../domain/catalogue.js';
import { faultable, pathsOf, type Operation } from '../../contract/operations.js';
import { componentName, schemaRef, type Json } from './components.js';
import { modelLimits } from './describe.js';
import { ERROR_RESPONSES, INJECTED } from './errorResponses.js';
import { parametersOf, securityOf } from './parameters.js';

/** What the operation objects need besides the table row. */
interface OperationContext {
  readonly models: readonly Model[];
  readonly voices: readonly { readonly id: string }[];
  /** The `$id` of the schema of one streamed chat chunk. */
  readonly chunkSchema: string;
}

/** `chat.completions` -> `chatCompletions`: an identifier code generators can use as a method name. */
export const operationId = (id: string): string =>
  id.replace(/[._-]+([a-zA-Z0-9])/g, (_m, c: string) => c.toUpperCase());

const respRef = (status: number): Json => ({ $ref: `#/components/responses/${ERROR_RESPONSES[status]}` });
const headerRef = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

const LIMIT_HEADERS = ['Limit', 'Remaining', 'Reset'];

/** The headers of a success: the request id, the rate-limit state for keyed operations, and whether it takes byte
 * ranges. */
function successHeaders(op: Operation): Json {
  const kinds = op.auth !== 'key' ? [] : op.countsTokens ? ['Requests', 'Tokens'] : ['Requests'];
  const limits = kinds.flatMap((k) =>
    LIMIT_HEADERS.map((l) => [`X-RateLimit-${l}-${k}`, headerRef(`XRateLimit${l}${k}`)]),
  );
  const ignored = op.requestSchema ? [['X-Mock-Ignored-Fields', headerRef('XMockIgnoredFields')]] : [];
  const ranges = op.success.ranges ? [['Accept-Ranges', headerRef('AcceptRanges')]] : [];
  return Object.fromEntries([['X-Request-Id', headerRef('XRequestId')], ...limits, ...ignored, ...ranges]);
}

/** The 206 of an operation that serves its body in part: the one range asked for, as the success's media. */
function partialResponse(op: Operation, ctx: OperationContext): Json {
  if (!op.success.ranges) return {};
  const headers = { ...successHeaders(op), 'Content-Range': headerRef('ContentRange') };
  return {
    '206': {
      description: 'Partial content: the bytes of the one range the `Range` header asked for.',
      headers,
      content: successContent(op, ctx),
    },
  };
}

/** The success content: a schema reference, binary media, and for chat the event stream too. */
function successContent(op: Operation, ctx: OperationContext): Json {
  const { schema, contentType } = op.success;
  if (contentType !== 'application/json') {
    return { [contentType]: { schema: { type: 'string', format: 'binary', contentMediaType: contentType } } };
  }
  const content: Json = {
    'application/json': {
      schema: schema
        ? schemaRef(componentName(schema))
        : ((op.success.inline as Json | undefined) ?? { type: 'object' }),
    },
  };
  if (op.success.streams) {
    content['text/event-stream'] = {
      schema: {
        type: 'string',
        description: `With \`"stream": true\`: server-sent events, each \`data: <JSON>\\n\\n\` where the JSON is a ${componentName(ctx.chunkSchema)}, ending with \`data: [DONE]\\n\\n\`. With \`stream_options.include_usage\`, the last chunk before [DONE] carries \`usage\` and no choices. A stream still running at the server's stream time limit ends instead with an error event, \`data: <Error>\` with code \`stream_time_limit\` (the StreamTimeLimit response).`,
      },
      'x-unified-ai-mock': { event: schemaRef(componentName(ctx.chunkSchema)), terminator: '[DONE]' },
    };
  }
  return content;
}

/** The error statuses an operation can answer with, each a shared component response. */
function errorResponses(op: Operation): Json {
  const statuses = new Set<number>();
  if (faultable(op) || op.requestSchema) statuses.add(400); // a malformed control header, or the body
  if (op.auth === 'key') [401, 429].forEach((s) => statuses.add(s));
  if (op.auth === 'admin') statuses.add(403);
  if (op.path.includes(':')) statuses.add(404);
  if (op.success.ranges) statuses.add(416);
  op.errors?.forEach((s) => statuses.add(s));
  if (op.requestSchema) [413, 415].forEach((s) => statuses.add(s));
  if (op.faultable !== false) statuses.add(500);
  const out: Json = Object.fromEntries([...statuses].sort((a, b) => a - b).map((s) => [String(s), respRef(s)]));
  if (faultable(op)) out.default = { $ref: `#/components/responses/${INJECTED}` };
  return out;
}

/** The description: the operation's text, then per-model limits and other paths it answers on. */
function description(op: Operation, ctx: OperationContext): string {
  const { doc } = op;
  const parts = [doc.description ?? ''];
  if (doc.models) parts.push(`Models the mock knows, and their limits:\n\n${modelLimits(ctx.models, doc.models)}`);
  if (doc.voices)
    parts.push(`Voices the mock knows (\`voice_id\`): ${ctx.voices.map((v) => `\`${v.id}\``).join(', ')}.`);
  const others = pathsOf(op).slice(1);
  if (others.length) parts.push(`Also served at ${others.map((p) => `\`${p}\``).join(', ')}.`);
  return parts.filter(Boolean).join('\n\n');
}

/** The OpenAPI operation object of one table row. */
export function operationObject(op: Operation, ctx: OperationContext): Json {
  const parameters = parametersOf(op);
  const status = String(op.success.status ?? 200);
  return {
    tags: [op.doc.tag],
    summary: op.doc.summary,
    description: description(op, ctx),
    operationId: operationId(op.id),
    ...(parameters.length ? { parameters } : {}),
    ...(op.requestSchema
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: schemaRef(componentName(op.requestSchema)) } },
          },
        }
      : {}),
    responses: {
      [status]: {
        description: status === '201' ? 'Created.' : 'Success.',
        headers: successHeaders(op),
        content: successContent(op, ctx),
      },
      ...partialResponse(op, ctx),
      ...errorResponses(op),
    },
    security: securityOf(op),
    'x-unified-ai-mock': { operation: op.id, extension: !op.documented, paths: pathsOf(op) },
  };
}
