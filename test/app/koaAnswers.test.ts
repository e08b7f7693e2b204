import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../src/app/createApp.js';
import type { RequestRecord } from '../../src/pipeline/requestContext.js';
import { VALID, waitFor } from '../support/index.js';

/** The app behind a node:http server of its own, with the responses it was handed. */
async function serving(
  fn: (port: number, responses: ServerResponse[], records: RequestRecord[]) => Promise<void>,
): Promise<void> {
  const records: RequestRecord[] = [];
  const { handler } = createApp({}, { observers: [(record) => void records.push(record)] });
  const responses: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    responses.push(res);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await fn((server.address() as AddressInfo).port, responses, records);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Sends a request and resolves with the response as soon as its head arrives (the body is left unread). */
function head(port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', method, path, headers }, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

test('a running stream carries no watch of Koa on its response; the request still ends once, with its record', async () => {
  await serving(async (port, responses, records) => {
    const body = JSON.stringify({ ...(VALID['chat.completions'] as object), stream: true });
    const res = await head(port, 'POST', '/v1/text-provider/chat/completions', body, {
      authorization: 'Bearer sk-mock-default',
      'content-type': 'application/json',
      'x-mock-pacing': 'ttft=60000',
    });
    assert.is(res.statusCode, 200);
    const served = responses[0]!;
    // on-finished (Koa's handleRequest) keeps its listener on the response there, and listens for 'finish'.
    assert.is((served as { __onFinished?: unknown }).__onFinished, undefined, 'no on-finished listener');
    assert.is(records.length, 0, 'no record while the stream runs');
    res.destroy();
    await waitFor("the stream's record", () => records.length > 0);
    assert.is(records.length, 1);
    assert.is(records[0]!.stream, 'aborted');
    assert.is(records[0]!.status, 200);
  });
});

test("an answer Koa writes (the router's OPTIONS) keeps its status, headers and body", async () => {
  await serving(async (port) => {
    const res = await head(port, 'OPTIONS', '/v1/video-provider/generate/vid_x');
    const text = await new Promise<string>((resolve) => {
      let all = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (all += c));
      res.on('end', () => resolve(all));
    });
    assert.is(res.statusCode, 200);
    assert.match(String(res.headers.allow), /\bGET\b/);
    assert.ok(res.headers['x-request-id'], 'the request id, as on every answer');
    assert.is(text, '');
  });
});

test.run();
