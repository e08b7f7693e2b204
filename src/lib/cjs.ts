import { requireCjs } from './require.js';

// node:http and @koa/router, loaded with require rather than import. On Node 22 and later an ESM import
// of node:http (ours, or the one in @koa/router's ESM build) reads every export of the module to build
// its namespace, and reading the lazy WebSocket, CloseEvent and MessageEvent exports loads Node's
// bundled fetch client (undici): about 13 MiB of RSS on Node 24, in a server that never calls it.
// Required, node:http keeps those exports lazy, and @koa/router resolves to its CommonJS build.
export const http = requireCjs('node:http') as typeof import('node:http');
export const koaRouter = requireCjs('@koa/router') as typeof import('@koa/router');
