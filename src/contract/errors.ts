/**
 * One error class and one table of codes, always rendered in the envelope `{"error": {"message", "type", "param",
 * "code"}}` that the OpenAI SDK reads: by renderError (src/pipeline/errors.ts), which serve calls for every refusal,
 * and by the connection tracker for what Node's parser refuses before the app (src/server/connections.ts).
 */

/** One entry of the error table: HTTP status, envelope `type` and `code`, default message. */
export interface ErrorTemplate {
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly message: string;
}

/** The error table; every error the mock sends starts from one of these rows. */
export const ERRORS = {
  INVALID_JSON: {
    status: 400,
    type: 'invalid_request_error',
    code: 'invalid_json',
    message: 'The request body is not valid JSON.',
  },
  BODY_NOT_OBJECT: {
    status: 400,
    type: 'invalid_request_error',
    code: 'invalid_body',
    message: 'The request body must be a JSON object.',
  },
  UNSUPPORTED_CONTENT_TYPE: {
    status: 400,
    type: 'invalid_request_error',
    code: 'unsupported_content_type',
    message: "Content-Type must be 'application/json'.",
  },
  VALIDATION: { status: 400, type: 'invalid_request_error', code: 'invalid_value', message: 'Invalid request.' },
  MODEL_NOT_FOUND: { status: 400, type: 'invalid_request_error', code: 'model_not_found', message: 'Unknown model.' },
  WRONG_MODEL_KIND: {
    status: 400,
    type: 'invalid_request_error',
    code: 'model_not_supported',
    message: 'Model not supported by this endpoint.',
  },
  INVALID_IMAGE: {
    status: 400,
    type: 'invalid_request_error',
    code: 'invalid_image',
    message: 'The image is not a supported image.',
  },
  INVALID_SSML: { status: 400, type: 'invalid_request_error', code: 'invalid_ssml', message: 'The SSML is malformed.' },
  UNSUPPORTED_OUTPUT_FORMAT: {
    status: 400,
    type: 'invalid_request_error',
    code: 'unsupported_output_format',
    message: 'Unsupported output format.',
  },
  UNKNOWN_VOICE: { status: 400, type: 'invalid_request_error', code: 'voice_not_found', message: 'Unknown voice.' },
  UNKNOWN_REPLY_RULE: {
    status: 400,
    type: 'invalid_request_error',
    code: 'unknown_reply_rule',
    message: 'Unknown reply rule.',
  },
  INVALID_HEADER: { status: 400, type: 'invalid_request_error', code: 'invalid_header', message: 'Invalid header.' },
  MISSING_KEY: {
    status: 401,
    type: 'invalid_request_error',
    code: null,
    message:
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
  },
  INVALID_AUTH_SCHEME: {
    status: 401,
    type: 'invalid_request_error',
    code: 'invalid_auth_scheme',
    message: 'The Authorization header must use the Bearer scheme (i.e. Authorization: Bearer YOUR_KEY).',
  },
  INVALID_KEY: {
    status: 401,
    type: 'invalid_request_error',
    code: 'invalid_api_key',
    message: 'Incorrect API key provided.',
  },
  ADMIN_FORBIDDEN: {
    status: 403,
    type: 'permission_error',
    code: 'admin_forbidden',
    message: 'The admin API is not available to this client.',
  },
  NOT_FOUND: { status: 404, type: 'invalid_request_error', code: 'not_found', message: 'Unknown path.' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    type: 'invalid_request_error',
    code: 'method_not_allowed',
    message: 'Method not allowed.',
  },
  DUPLICATE_RULE_ID: {
    status: 409,
    type: 'invalid_request_error',
    code: 'duplicate_rule_id',
    message: 'A fault rule with this id exists already.',
  },
  BODY_TOO_LARGE: {
    status: 413,
    type: 'invalid_request_error',
    code: 'request_too_large',
    message: 'The request body is too large.',
  },
  UNSUPPORTED_ENCODING: {
    status: 415,
    type: 'invalid_request_error',
    code: 'unsupported_content_encoding',
    message: 'Compressed request bodies are not accepted.',
  },
  RANGE_NOT_SATISFIABLE: {
    status: 416,
    type: 'invalid_request_error',
    code: 'range_not_satisfiable',
    message: 'The requested range is not satisfiable.',
  },
  RATE_LIMITED: { status: 429, type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached.' },
  // A model's slots and waiting queue are full under its latency profile (maxRunning, maxWaiting): 429 by default,
  // 503 with latency.queueFullStatus, as an overloaded model server answers either.
  MODEL_OVERLOADED: {
    status: 429,
    type: 'requests',
    code: 'model_overloaded',
    message: 'The model is at capacity; retry later.',
  },
  INTERNAL: {
    status: 500,
    type: 'server_error',
    code: null,
    message: 'The server had an error processing your request.',
  },
  // Sent as the last event of a stream that runs past timeouts.streamMaxMs (the 200 head is out by then); 504 names
  // what it is.
  STREAM_TIME_LIMIT: {
    status: 504,
    type: 'server_error',
    code: 'stream_time_limit',
    message: "The stream ran past the server's stream time limit and was ended.",
  },
  STATE_UNAVAILABLE: {
    status: 503,
    type: 'server_error',
    code: 'state_unavailable',
    message: "The mock's shared state (Redis) cannot be reached; retry shortly.",
  },
  // Written straight to the socket (src/server/connections.ts): Node's HTTP parser or its timers refused the
  // request before the app saw it, and the connection is closed after the answer.
  REQUEST_TIMEOUT: {
    status: 408,
    type: 'invalid_request_error',
    code: 'request_timeout',
    message: 'The request (headers and body) did not arrive in time; the connection is closed.',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    type: 'invalid_request_error',
    code: 'request_header_fields_too_large',
    message: 'The request headers are too large.',
  },
  CHUNK_EXTENSIONS_TOO_LARGE: {
    status: 413,
    type: 'invalid_request_error',
    code: 'request_too_large',
    message: 'The chunk extensions of the request body are too large.',
  },
  CONNECT_NOT_ALLOWED: {
    status: 405,
    type: 'invalid_request_error',
    code: 'method_not_allowed',
    message: 'CONNECT is not supported: this server is not a proxy.',
  },
  INCOMPLETE_REQUEST: {
    status: 400,
    type: 'invalid_request_error',
    code: 'incomplete_request',
    message: 'The connection ended before the request was complete.',
  },
  MALFORMED_REQUEST: {
    status: 400,
    type: 'invalid_request_error',
    code: 'malformed_request',
    message: 'The request is not valid HTTP/1.1.',
  },
  MISSING_HOST: {
    status: 400,
    type: 'invalid_request_error',
    code: 'missing_host',
    message: 'An HTTP/1.1 request must carry a Host header.',
  },
  EXPECTATION_FAILED: {
    status: 417,
    type: 'invalid_request_error',
    code: 'expectation_failed',
    message: "The only expectation this server meets is 'Expect: 100-continue'.",
  },
  UNSUPPORTED_TRANSFER_CODING: {
    status: 501,
    type: 'invalid_request_error',
    code: 'unsupported_transfer_encoding',
    message: "The only transfer coding accepted is 'chunked'.",
  },
} as const satisfies Record<string, ErrorTemplate>;

/** One violated rule, as listed in the envelope's `details`. */
export interface Detail {
  readonly param: string | null;
  readonly code: string;
  readonly message: string;
}

/** Options that complete an error: the field, a precise message, every violation, extra headers. */
interface ErrorOptions {
  readonly message?: string;
  readonly param?: string | null;
  readonly code?: string | null;
  readonly type?: string;
  readonly status?: number;
  readonly details?: readonly Detail[];
  readonly headers?: Readonly<Record<string, string>>;
}

/** The one error type the mock throws on purpose; anything else is rendered as a 500. */
export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  readonly details: readonly Detail[] | undefined;
  readonly headers: Readonly<Record<string, string>>;
  private json: string | undefined;

  constructor(template: ErrorTemplate, options: ErrorOptions = {}) {
    // An ApiError is an answer, not a bug: capturing its stack cost about a tenth of a 400 or 401.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(options.message ?? template.message);
    Error.stackTraceLimit = limit;
    this.name = 'ApiError';
    this.status = options.status ?? template.status;
    this.type = options.type ?? template.type;
    this.code = options.code === undefined ? template.code : options.code;
    this.param = options.param ?? null;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  /** The wire envelope as JSON text, rendered once (the errors answered most often are made once and reused). */
  toJson(): string {
    return (this.json ??= JSON.stringify(this.toBody()));
  }

  /** The wire envelope. */
  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { message: this.message, type: this.type, param: this.param, code: this.code };
    if (this.details) error.details = this.details;
    return { error };
  }
}

/** The error envelope on the wire. */
export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null; details?: readonly Detail[] };
}

/** The template for a status that has no row of its own (used by injected faults). */
export function templateForStatus(status: number): ErrorTemplate {
  const byStatus: Record<number, ErrorTemplate> = {
    400: ERRORS.VALIDATION,
    401: ERRORS.INVALID_KEY,
    403: ERRORS.ADMIN_FORBIDDEN,
    404: ERRORS.NOT_FOUND,
    405: ERRORS.METHOD_NOT_ALLOWED,
    409: ERRORS.DUPLICATE_RULE_ID,
    413: ERRORS.BODY_TOO_LARGE,
    429: ERRORS.RATE_LIMITED,
    500: ERRORS.INTERNAL,
  };
  const known = byStatus[status];
  if (known) return known;
  return status >= 500
    ? { status, type: 'server_error', code: null, message: `The server answered ${status}.` }
    : { status, type: 'invalid_request_error', code: null, message: `The server answered ${status}.` };
}
