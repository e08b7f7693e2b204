/**
 * The bare node:http baseline the benchmark compares the mock with: it checks the bearer key, parses
 * the JSON body, rejects a message whose content is not a string, and otherwise sends a fixed answer.
 * It imports only Node built-ins so the driver can run it as plain JavaScript.
 *
 * Usage: node baseline.mjs [--port N] [--answer FILE]
 *   FILE is JSON {status, contentType, body (base64), stream}: the fixed answer for valid requests
 *   (the driver captures it from the mock, so both servers send the same bytes); without it, a fixed
 *   chat completion.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFileSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';

const KEY = 'Bearer sk-mock-default';

/** The fixed answer for valid requests. */
export interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
  /** Server-sent events, written one event at a time. */
  stream: boolean;
}

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

const CHAT_COMPLETION: Answer = {
  status: 200,
  contentType: 'application/json',
  stream: false,
  body: json({
    id: 'chatcmpl-IPsVARqdHNfXOKi0Y0NVtIxW7Sk2w',
    object: 'chat.completion',
    created: 1767225600,
    model: 'gpt-4o-mini',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'This is a test.', refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
    service_tier: 'default',
    system_fingerprint: 'fp_e8b22a2441',
  }),
};
const UNAUTHORIZED = json({
  error: {
    message: 'Incorrect API key provided.',
    type: 'invalid_request_error',
    param: null,
    code: 'invalid_api_key',
  },
});
const INVALID_JSON = json({
  error: {
    message: 'The request body is not valid JSON.',
    type: 'invalid_request_error',
    param: null,
    code: 'invalid_json',
  },
});
const INVALID_CONTENT = (i: number) =>
  json({
    error: {
      message: `Invalid type for 'messages[${i}].content': expected a string.`,
      type: 'invalid_request_error',
      param: `messages[${i}].content`,
      code: 'invalid_type',
    },
  });

function send(res: ServerResponse, status: number, body: Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length, ...headers });
  res.end(body);
}

/** Index of the first message whose content is not a string, or -1. */
function badMessage(body: { messages?: unknown }): number {
  if (!Array.isArray(body.messages)) return -1;
  return body.messages.findIndex((m: { content?: unknown } | null) => typeof m?.content !== 'string');
}

function answer(res: ServerResponse, fixed: Answer, events: Buffer[]): void {
  if (!fixed.stream) {
    send(res, fixed.status, fixed.body, { 'content-type': fixed.contentType });
    return;
  }
  res.writeHead(fixed.status, { 'content-type': fixed.contentType, 'cache-control': 'no-cache' });
  for (const event of events) res.write(event);
  res.end();
}

/** Starts the baseline; resolves to its URL and a close function. */
export async function startBaseline(
  port = 0,
  fixed: Answer = CHAT_COMPLETION,
): Promise<{ url: string; close(): Promise<void> }> {
  // Each event keeps its blank-line terminator, so the bytes on the wire equal the captured body.
  const events = fixed.stream ? (fixed.body.toString('utf8').match(/[^]*?\n\n/g) ?? []).map((e) => Buffer.from(e)) : [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.authorization !== KEY)
      return send(res, 401, UNAUTHORIZED, { 'www-authenticate': 'Bearer error="invalid_token"' });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: { messages?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages?: unknown };
      } catch {
        return send(res, 400, INVALID_JSON);
      }
      const bad = body && typeof body === 'object' ? badMessage(body) : 0;
      if (bad >= 0) return send(res, 400, INVALID_CONTENT(bad));
      answer(res, fixed, events);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Reads an answer file written by the driver. */
export function readAnswer(file: string): Answer {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as {
    status: number;
    contentType: string;
    body: string;
    stream: boolean;
  };
  return {
    status: raw.status,
    contentType: raw.contentType,
    stream: raw.stream,
    body: Buffer.from(raw.body, 'base64'),
  };
}

async function main(): Promise<void> {
  // --schema is accepted and ignored: the driver starts every reference server with the same flags.
  const { values } = parseArgs({
    options: { port: { type: 'string' }, answer: { type: 'string' }, schema: { type: 'string' } },
  });
  const running = await startBaseline(
    Number(values.port ?? 0),
    values.answer ? readAnswer(values.answer) : CHAT_COMPLETION,
  );
  process.stdout.write(`baseline listening on ${running.url}\n`);
  const stop = () => void running.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

// Run as a program (by the driver), not when imported for tests.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === realpathSync(resolve(process.argv[1])))
  void main();
