/**
 * Every private slot the mock keeps on an object it does not own (Node's sockets and requests, pino's logger), named
 * in this one module as pino names its own (its lib/symbols.js). A property under a symbol is a field of the object's
 * shape: a Map from the object would be written and rehashed on every request.
 */

/** On an IncomingMessage: its whole body was read before Node marked it complete (pipeline/readBody.ts), so the
 * connection tracker has nothing left to discard. */
export const BODY_READ = Symbol('bodyRead');

/** On a socket: the response in progress on it (server/connections.ts), to tell busy connections from idle ones. */
export const IN_FLIGHT = Symbol('inFlight');

/** On a ServerResponse: its request's id (app/serve.ts), for an answer the connection tracker writes to its socket. */
export const REQUEST_ID = Symbol('requestId');

/** On a ServerResponse: the error the connection tracker wrote to its socket for it (a request that stopped coming, a
 * bad chunk), which its record then reports (pipeline/requestContext.ts). */
export const RAW_ANSWER = Symbol('rawAnswer');

/** On a socket: the ends of the responses still queued behind the one it writes (HTTP/1.1 pipelining), told by one
 * 'close' listener for all of them (pipeline/requestEnd.ts). */
export const QUEUED = Symbol('queuedResponses');

/** On a pino logger made by createLogger: the destination it was given, which requestLogger writes its lines to
 * itself (pino keeps it under a symbol of its own, which no documentation promises). */
export const LOG_DESTINATION = Symbol('logDestination');
