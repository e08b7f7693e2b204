import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import compose from 'koa-compose';
import { http, koaRouter } from '../lib/cjs.js';
import { ApiError, ERRORS } from '../contract/errors.js';
import { pathsOf } from '../contract/operations.js';
import { hintFor } from '../contract/pathHints.js';
import type { BoundOperation as Operation } from './handler.js';
import { openHead } from './requestContext.js';
import { STOP, type RequestState, type Step } from './steps.js';

/** Finds the operation a request is for. */
export interface Routes {
  /** The operation at exactly this method and path (paths without parameters), if any. */
  exact(method: string, path: string): Operation | undefined;
  /**
   * Every other request, through the router (parameters, HEAD, OPTIONS): the operation, or undefined when
   * the router answered itself (OPTIONS); a 405 with Allow, or a 404, as envelope errors.
   */
  match(ctx: Context): Promise<Operation | undefined>;
}

const nothing = async () => {};

/** The path of a request target without its query: what ctx.path gives for targets that start with '/'. */
export function pathOfUrl(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/**
 * A path as a message shows it: percent-decoded where it decodes (so the server's echo mask finds a key
 * sent percent-encoded, as the journal does), cut to `max` characters (messages.maxPathChars).
 */
function shown(path: string, max: number): string {
  let out = path;
  if (path.includes('%')) {
    try {
      out = decodeURIComponent(path);
    } catch {
      // not UTF-8 once decoded: shown as sent
    }
  }
  return out.slice(0, max);
}

/**
 * The routes of the operations table, looked up in a map where the path has no parameters. `maxPathChars`
 * (messages.maxPathChars of fixtures/limits.json): how much of an unknown path a 404 or 405 message shows.
 */
export function routeTable(ops: readonly Operation[], maxPathChars: number): Routes {
  // Every method Node's HTTP parser accepts counts as implemented (PROPFIND, TRACE, M-SEARCH, ...): the
  // router's default list is the seven common ones, and any other method got a bare 501 text/plain from
  // it. So an unusual method on a path the mock serves is a 405 with Allow, and elsewhere a 404, in the
  // envelope like every other answer. (A method the parser does not know never reaches the app: it is a
  // 400 malformed_request from the server; CONNECT is answered there too.)
  const router = new koaRouter.Router({ methods: http.METHODS });
  // Most traffic hits paths without parameters: a map finds them at once, where the router would test
  // every route's pattern in turn. Both come from the same table.
  const exact = new Map<string, Map<string, Operation>>(); // by method, then path
  for (const op of ops) {
    const select: Middleware = (ctx) => void ((ctx.state as RequestState).operation = op);
    for (const path of pathsOf(op)) {
      router.register(path, [op.method], select);
      if (path.includes(':')) continue;
      const paths = exact.get(op.method) ?? new Map<string, Operation>();
      exact.set(op.method, paths.set(path, op));
    }
  }
  const routed = compose([router.routes(), router.allowedMethods()] as Middleware[]);
  return {
    exact: (method, path) => exact.get(method)?.get(path),
    async match(ctx) {
      await routed(ctx, nothing);
      const op = (ctx.state as RequestState).operation;
      if (op) return op;
      if (ctx.status === 405)
        throw new ApiError(ERRORS.METHOD_NOT_ALLOWED, {
          message: `Method ${ctx.method} is not allowed on ${shown(ctx.path, maxPathChars)}.`,
          headers: { Allow: String(ctx.response.get('Allow')) },
        });
      if (ctx.status === 404 && ctx.body === undefined) {
        const hint = hintFor(ctx.path);
        throw new ApiError(ERRORS.NOT_FOUND, {
          message: `Unknown path: ${ctx.method} ${shown(ctx.path, maxPathChars)}.${hint ? ` ${hint}` : ''}`,
        });
      }
      return undefined;
    },
  };
}

/**
 * What HTTP/1.1 asks a server to refuse in a request's head, which Node leaves to the app (server.ts hands it the
 * requests Node would have answered with a bare 400 or 417, for an answer in the envelope that is recorded): an
 * expectation other than 100-continue (417), and a 1.1 request without Host (400). A 100-continue is answered when
 * the body is about to be read (parseBody), so a request refused before (401, 404, 413) never has its body sent.
 */
export function protocolProblem(req: IncomingMessage): ApiError | undefined {
  if (req.httpVersionMinor === 0) return undefined; // HTTP/1.0: no Host needed, and Expect ignored (RFC 9110 §10.1.1)
  const { expect, host } = req.headers;
  if (expect !== undefined && expect.toLowerCase() !== '100-continue') return new ApiError(ERRORS.EXPECTATION_FAILED);
  if (host === undefined) return new ApiError(ERRORS.MISSING_HOST);
  return undefined;
}

/**
 * The first step of every request: its operation, found in the exact map (the path kept for the record), else by the
 * router, which answers OPTIONS itself (STOP: Koa writes the router's answer) and refuses with a 404 or 405. The
 * router writes headers of its own (Allow): the request's are set on the response first, as on every answer.
 */
export function route(routes: Routes): Step {
  return function route(ctx, state) {
    const problem = protocolProblem(ctx.req);
    if (problem) return problem;
    const path = pathOfUrl(ctx.url);
    const op = routes.exact(ctx.method, path);
    if (op) {
      state.operation = op;
      state.path = path;
      return;
    }
    openHead(ctx.res, state);
    return routes.match(ctx).then((found) => (found ? void (state.operation = found) : STOP));
  };
}
