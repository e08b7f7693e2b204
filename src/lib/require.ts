import { createRequire } from 'node:module';

/**
 * The package's one `require`, for what is loaded on demand or only as CommonJS (ioredis, ajv's parts, the
 * tokenizer's tables, a generated validator module; node:http and @koa/router in lib/cjs.ts): a bare name resolves
 * from the package's own node_modules, whichever file asks; a path must be absolute. A module of its own, so that
 * asking for it loads nothing else (lib/cjs.ts loads node:http and @koa/router: 100 ms the command-line tools never
 * need).
 */
export const requireCjs: NodeJS.Require = createRequire(import.meta.url);
