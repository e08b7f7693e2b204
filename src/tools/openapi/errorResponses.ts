import { ApiError, templateForStatus, type ErrorTemplate } from '../../contract/errors.js';
import { schemaRef, type Json } from './components.js';

/** The components.responses name of each error status the mock sends on its own. */
export const ERROR_RESPONSES: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  408: 'RequestTimeout',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  416: 'RangeNotSatisfiable',
  417: 'ExpectationFailed',
  429: 'TooManyRequests',
  431: 'RequestHeaderFieldsTooLarge',
  500: 'InternalServerError',
  501: 'NotImplemented',
  504: 'StreamTimeLimit',
  503: 'ServiceUnavailable',
};

/** The response for any status a fault asks for (X-Mock-Fault, Prefer or a fault rule). */
export const INJECTED = 'InjectedFault';

const WHEN: Readonly<Record<number, string>> = {
  400: 'Bad request: the body, a parameter or a control header is invalid. `param` names the field and `details` lists every violation.',
  401: 'Unauthorized: the API key is missing, not a Bearer token, or unknown.',
  403: 'Forbidden: the admin API is not open to this client (see the adminToken security scheme).',
  404: 'Not found: no such resource (or, for any path the mock does not serve, no such route).',
  405: 'Method not allowed on a path the mock serves; the `Allow` header lists the methods.',
  408: 'The request (headers and body) did not arrive within `timeouts.headersMs` / `timeouts.requestMs`; answered on the socket, and the connection is closed.',
  409: 'Conflict: a fault rule with this id exists already.',
  413: "The request body is larger than the server accepts: the operation's own limit, or `--body-limit` when lower.",
  415: 'The request body is compressed (Content-Encoding); send it uncompressed.',
  416: 'Range not satisfiable: the `Range` header asks for bytes past the end of the body (or for its last 0 bytes); `Content-Range: bytes */LENGTH` gives its length.',
  417: "Expectation failed: the request's `Expect` header asks for something other than `100-continue` (HTTP/1.1; an HTTP/1.0 request's `Expect` is ignored). A `100-continue` is answered only once the request has passed every check that reads no body, so a refused request never has its body sent.",
  429: "Rate limit reached for the key, or (`model_overloaded`) the model's slots and waiting queue are full under its latency profile. `retry-after` (seconds) and `retry-after-ms` say when to come back.",
  431: 'The request headers are larger than the server reads (16 KiB); answered on the socket, and the connection is closed.',
  500: 'Server error. Retry with backoff.',
  501: "Not implemented: the request's `Transfer-Encoding` names a coding other than `chunked`, the only one accepted (RFC 9112 §6.1).",
  504: "Never an HTTP status: the last `data:` event of a chat stream that runs past the server's stream time limit (`timeouts.streamMaxMs`), sent instead of `[DONE]` once the 200 head is out. The OpenAI SDKs throw it as an APIError.",
  503: "The shared state (`--state redis://...`) cannot be reached: rate limits, fault rules, the journal and video tasks cannot be decided; or, with `latency.queueFullStatus` 503, the model's slots and waiting queue are full (`model_overloaded`). `retry-after` says when to try again.",
};

const HEADERS_OF: Readonly<Record<number, readonly string[]>> = {
  401: ['WWW-Authenticate'],
  405: ['Allow'],
  416: ['Content-Range'],
  429: ['Retry-After', 'Retry-After-Ms'],
  503: ['Retry-After'],
};

const headerRef = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

/** The components.examples name of an error table row, e.g. MISSING_KEY -> MissingKey. */
const exampleName = (row: string): string =>
  row.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase());

const example = (template: ErrorTemplate, summary: string): Json => ({
  summary,
  value: new ApiError(template).toBody(),
});

/**
 * Error responses with examples rendered from the error table exactly as the mock sends them (the
 * messages are the defaults; most errors replace them with one that names the field or value).
 */
export function errorComponents(table: Readonly<Record<string, ErrorTemplate>>): {
  responses: Record<string, Json>;
  examples: Record<string, Json>;
} {
  const examples: Record<string, Json> = {};
  const byStatus = new Map<number, string[]>();
  for (const [row, template] of Object.entries(table)) {
    const name = exampleName(row);
    examples[name] = example(template, `${template.status} ${template.code ?? row.toLowerCase()}`);
    byStatus.set(template.status, [...(byStatus.get(template.status) ?? []), name]);
  }
  examples.InjectedServiceUnavailable = example(templateForStatus(503), '503 injected with X-Mock-Fault: status=503');
  const responses: Record<string, Json> = {};
  for (const [status, name] of Object.entries(ERROR_RESPONSES)) {
    const names = byStatus.get(Number(status)) ?? [];
    responses[name] = {
      description: WHEN[Number(status)],
      headers: Object.fromEntries(
        ['X-Request-Id', ...(HEADERS_OF[Number(status)] ?? [])].map((h) => [h, headerRef(h.replaceAll('-', ''))]),
      ),
      content: {
        'application/json': {
          schema: schemaRef('Error'),
          ...(names.length
            ? { examples: Object.fromEntries(names.map((n) => [n, { $ref: `#/components/examples/${n}` }])) }
            : {}),
        },
      },
    };
  }
  responses[INJECTED] = {
    description:
      'Any status from 400 to 599 that a fault asks for: the `X-Mock-Fault` or `Prefer` header, or a fault rule. The body is the same error envelope (statuses with a row of their own use its type and code).',
    headers: {
      'X-Request-Id': headerRef('XRequestId'),
      'Retry-After': headerRef('RetryAfter'),
      'Retry-After-Ms': headerRef('RetryAfterMs'),
      'X-Should-Retry': headerRef('XShouldRetry'),
    },
    content: {
      'application/json': {
        schema: schemaRef('Error'),
        examples: { InjectedServiceUnavailable: { $ref: '#/components/examples/InjectedServiceUnavailable' } },
      },
    },
  };
  return { responses, examples };
}

const header = (description: string, schema: Json, extension = false): Json => ({
  description,
  schema,
  ...(extension ? { 'x-unified-ai-mock': { extension: true } } : {}),
});

/** The response headers the mock sends, by components.headers name. */
export function headerComponents(): Record<string, Json> {
  const limit = (what: string, kind: string, schema: Json) =>
    header(`${what} (${kind}); sent to keys with a rate limit.`, schema);
  return {
    AcceptRanges: header(
      '`bytes`: the body is also served in part, one byte range at a time (see the `Range` parameter).',
      { const: 'bytes' },
    ),
    Allow: header('The methods the path accepts.', { type: 'string' }),
    ContentRange: header(
      'The bytes sent and the length of the whole body: `bytes a-b/LENGTH` on a 206, `bytes */LENGTH` on a 416.',
      {
        type: 'string',
        pattern: '^bytes (\\d+-\\d+|\\*)/\\d+$',
      },
    ),
    RetryAfter: header('Seconds to wait before retrying (whole seconds, rounded up).', {
      type: 'string',
      pattern: '^\\d+$',
    }),
    RetryAfterMs: header('Milliseconds to wait before retrying; the OpenAI SDKs prefer it to retry-after.', {
      type: 'string',
      pattern: '^\\d+$',
    }),
    WWWAuthenticate: header('The Bearer challenge, e.g. `Bearer error="invalid_token"`.', { type: 'string' }),
    XRateLimitLimitRequests: limit('Requests allowed per window', 'requests', { type: 'string', pattern: '^\\d+$' }),
    XRateLimitLimitTokens: limit('Tokens allowed per minute', 'tokens, chat only', {
      type: 'string',
      pattern: '^\\d+$',
    }),
    XRateLimitRemainingRequests: limit('Requests left in this window, after this one', 'requests', {
      type: 'string',
      pattern: '^\\d+$',
    }),
    XRateLimitRemainingTokens: limit('Tokens left in this minute', 'tokens, chat only', {
      type: 'string',
      pattern: '^\\d+$',
    }),
    XRateLimitResetRequests: limit('Time until the window resets, e.g. `59.964s`, `120ms`, `6m0s`', 'requests', {
      type: 'string',
    }),
    XRateLimitResetTokens: limit('Time until the token minute resets', 'tokens, chat only', { type: 'string' }),
    XRequestId: header(
      "The request id (the client's own X-Request-Id when it is plainly safe to echo); also in the request journal.",
      { type: 'string' },
    ),
    XMockIgnoredFields: header(
      'Body fields the request schema does not list, accepted and ignored (a 400 `unknown_parameter` under --strict instead): JSON pointers such as `/tools` or `/messages/0/tool_calls`, comma-separated, characters outside a safe set percent-encoded, at most 32 fields and about 1 KiB (`...` ends a longer list). Absent when every field is known.',
      { type: 'string' },
      true,
    ),
    XShouldRetry: header('`false` when a `no-retry` fault asks clients not to retry.', { const: 'false' }, true),
  };
}
