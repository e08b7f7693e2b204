import { faultable, type Operation } from '../../contract/operations.js';
import { FAULT_KINDS, proseOf, type FaultBounds } from '../../domain/faults/kinds.js';
import type { Json } from './components.js';

const EXTENSION = { 'x-unified-ai-mock': { extension: true } };

const controlHeader = (
  name: string,
  description: string,
  example: string,
  schema: Json = { type: 'string' },
): Json => ({
  name,
  in: 'header',
  required: false,
  description: `${description} Mock extension: ignored when the server runs with \`--no-fault-headers\`.`,
  schema,
  example,
  ...EXTENSION,
});

/** The control headers and other optional headers, as components.parameters. */
export function parameterComponents(
  outputFormats: readonly string[],
  defaultFormat: string,
  faultBounds: FaultBounds,
): Record<string, Json> {
  const { minimum, maximum } = faultBounds.status;
  return {
    Prefer: controlHeader(
      'Prefer',
      `\`code=NNN\` answers with that error status (${minimum}-${maximum}) instead of running the operation; the same as \`X-Mock-Fault: status=NNN\` (Prism's convention). Other preferences are ignored.`,
      'code=429',
    ),
    Range: {
      name: 'Range',
      in: 'header',
      required: false,
      description:
        'One byte range (RFC 9110): `bytes=a-b`, `bytes=a-` (to the end) or `bytes=-n` (the last n bytes); an end past the last byte is cut to it. Answered 206 with `Content-Range`; a range that starts at or past the end, or `bytes=-0`, is a 416. Several ranges, another unit, a malformed value or an `If-Range` header: the header is ignored and the whole body sent (200).',
      schema: { type: 'string' },
      example: 'bytes=0-1023',
    },
    XMicrosoftOutputFormat: {
      name: 'X-Microsoft-OutputFormat',
      in: 'header',
      required: false,
      description:
        'The audio format of the answer, as the cloud provider names it. Mock extension: the API document does not list it.',
      schema: { enum: [...outputFormats], default: defaultFormat },
      ...EXTENSION,
    },
    XMockFault: controlHeader(
      'X-Mock-Fault',
      `Injects a fault: directives separated by \`;\` - ${FAULT_KINDS.map((k) => proseOf(k, faultBounds)).join(', ')}. A malformed value is a 400 with \`code: "invalid_header"\`.`,
      'status=503; retry-after=2',
    ),
    XMockPacing: controlHeader(
      'X-Mock-Pacing',
      'Times the answer: `ttft=MS` (wait before the first chunk) and `tps=N` (tokens per second; 0 = as fast as possible) pace a stream, and replace a latency profile\'s times; `profile=NAME` picks the latency profile that times the answer (`off` for none). Each part at most once; a part out of its bounds, given twice or not understood is a 400 with `code: "invalid_header"`.',
      'ttft=400; tps=30',
    ),
    XMockReplyRule: controlHeader(
      'X-Mock-Reply-Rule',
      'Answers with this reply rule whatever the messages say (`default` for the composed default reply). An unknown id is a 400 with `code: "unknown_reply_rule"`.',
      'long',
    ),
  };
}

const ref = (name: string): Json => ({ $ref: `#/components/parameters/${name}` });

/** The components.parameters name of a header: X-Mock-Pacing -> XMockPacing. */
const componentOfHeader = (header: string): string => header.replaceAll('-', '');

/** The parameters of an operation: its path parameters, then the headers that apply to it. */
export function parametersOf(op: Operation): Json[] {
  const path = [...op.path.matchAll(/:(\w+)/g)].map((m) => ({
    name: m[1]!,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const headers = faultable(op) ? [ref('XMockFault'), ref('Prefer')] : [];
  for (const name of op.headers ?? []) headers.push(ref(componentOfHeader(name)));
  if (op.success.ranges) headers.push(ref('Range'));
  return [...path, ...headers];
}

/** The OpenAPI form of a router path: `:id` becomes `{id}`. */
export const openApiPath = (path: string): string => path.replace(/:(\w+)/g, '{$1}');

/** The security schemes: API keys for the API, the admin token for /__admin. */
export function securitySchemes(): Record<string, Json> {
  return {
    bearerAuth: {
      type: 'http',
      scheme: 'bearer',
      description:
        'An API key in `Authorization: Bearer <API_KEY>`. The mock accepts the keys it is configured with; `unified-ai-mock serve` prints them.',
    },
    adminToken: {
      type: 'http',
      scheme: 'bearer',
      description:
        'The admin API is separate from the API keys. Without `--admin-token` it answers clients on the same machine (loopback) with no credentials, when they address it by a loopback name, the `--public-url` host or an `--allowed-host` name (against DNS rebinding); with `--admin-token TOKEN` it requires `Authorization: Bearer TOKEN` from every client, or the session cookie a browser gets by opening `/__admin/?token=TOKEN` once (see docs/inspector.md). Anyone else gets a 403, and so does a change sent by a web page of another origin.',
      ...EXTENSION,
    },
  };
}

/** The security requirement of an operation. */
export function securityOf(op: Operation): Json[] {
  if (op.auth === 'key') return [{ bearerAuth: [] }];
  // Either the admin token, or nothing at all from a loopback client of a server started without one.
  if (op.auth === 'admin') return [{ adminToken: [] }, {}];
  return [];
}
