/**
 * The stack floor: the least a Koa + @koa/router + koa-bodyparser + compiled-Ajv server can do for a
 * chat completion (check the key, parse, validate against schemas/chat-request.json, send a fixed
 * answer). The benchmark measures it beside the mock so the report shows what the stack itself costs.
 *
 * Usage: node floor.mjs [--port N] [--answer FILE]   (the answer file as for the baseline)
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Router } from '@koa/router';
import { Ajv2020 } from 'ajv/dist/2020.js';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';

const KEY = 'Bearer sk-mock-default';
const UNAUTHORIZED = {
  error: {
    message: 'Incorrect API key provided.',
    type: 'invalid_request_error',
    param: null,
    code: 'invalid_api_key',
  },
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { port: { type: 'string' }, answer: { type: 'string' }, schema: { type: 'string' } },
  });
  const fixed = values.answer
    ? (JSON.parse(readFileSync(values.answer, 'utf8')) as { contentType: string; body: string })
    : undefined;
  const answer = fixed ? Buffer.from(fixed.body, 'base64') : Buffer.from('{}');
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const validate = ajv.compile(JSON.parse(readFileSync(values.schema!, 'utf8')) as object);

  const router = new Router();
  router.post(
    '/v1/text-provider/chat/completions',
    async (ctx, next) => {
      if (ctx.get('authorization') !== KEY) {
        ctx.status = 401;
        ctx.set('www-authenticate', 'Bearer error="invalid_token"');
        ctx.body = UNAUTHORIZED;
        return;
      }
      await next();
    },
    bodyParser(),
    (ctx) => {
      if (!validate(ctx.request.body)) {
        const e = validate.errors![0]!;
        ctx.status = 400;
        ctx.body = {
          error: {
            message: `Invalid '${e.instancePath}': ${e.message}`,
            type: 'invalid_request_error',
            param: e.instancePath,
            code: e.keyword,
          },
        };
        return;
      }
      ctx.type = fixed?.contentType ?? 'application/json';
      ctx.body = answer;
    },
  );
  const app = new Koa();
  app.use(router.routes());
  const server = app.listen(Number(values.port ?? 0), '127.0.0.1', () => {
    process.stdout.write(`floor listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  process.once('SIGTERM', () => process.exit(0));
}

void main();
