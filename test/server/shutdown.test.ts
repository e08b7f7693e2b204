// Graceful shutdown of `unified-ai-mock serve`: SIGTERM/SIGINT stop accepting, let requests in flight
// finish, end open streams with [DONE], and exit 0; a second signal exits at once.
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KEY } from '../support/index.js';

interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  readonly port: number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first stdout line that matches. */
  line(re: RegExp): Promise<string>;
}

async function serve(...args: string[]): Promise<Served> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const waiting: { re: RegExp; resolve: (l: string) => void }[] = [];
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop()!;
    for (const l of parts) {
      lines.push(l);
      for (const w of waiting.filter((x) => x.re.test(l))) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve(l);
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const line = (re: RegExp) => {
    const seen = lines.find((l) => re.test(l));
    return seen ? Promise.resolve(seen) : new Promise<string>((resolve) => waiting.push({ re, resolve }));
  };
  const url = /listening on (\S+)/.exec(await line(/listening on /))![1]!;
  return { child, url, port: Number(new URL(url).port), exited, line };
}

/** A chat request whose body is only partly sent; resolves once the server is handling it (100 Continue). */
function startUpload(port: number, body: string, sent: number) {
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(answer)));
  const handling = new Promise<void>((resolve) => {
    socket.on('data', (d: Buffer) => {
      answer += d.toString();
      if (answer.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
        answer = answer.slice('HTTP/1.1 100 Continue\r\n\r\n'.length);
        socket.write(body.slice(0, sent), () => resolve());
      }
    });
  });
  socket.on('connect', () =>
    socket.write(
      `POST /v1/text-provider/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    ),
  );
  return { socket, handling, closed };
}

/** Starts a paced chat stream; resolves once the first event arrived, with a promise of the whole text. */
function openStream(url: string): Promise<{ whole: Promise<string> }> {
  return new Promise((started, failed) => {
    const body = JSON.stringify({
      model: 'gpt-4o',
      stream: true,
      messages: [{ role: 'user', content: 'long answer' }],
    });
    const req = httpRequest(
      `${url}/v1/text-provider/chat/completions`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${KEY}`,
          'content-type': 'application/json',
          'x-mock-pacing': 'ttft=0; tps=20',
        },
      },
      (res) => {
        let text = '';
        const whole = new Promise<string>((resolve, reject) => {
          res.on('end', () => resolve(text));
          res.on('error', reject);
          res.on('close', () => reject(new Error(`the stream was cut before its end: ${text.slice(-200)}`)));
        });
        res.once('data', () => started({ whole }));
        res.on('data', (d: Buffer) => (text += d.toString()));
      },
    );
    req.on('error', failed);
    req.end(body);
  });
}

test('SIGTERM: an open stream runs to data: [DONE], new connections are refused, exit code 0', async () => {
  const s = await serve();
  const { whole } = await openStream(s.url);
  s.child.kill('SIGTERM');
  await s.line(/"msg":"shutting down"/);
  const text = await whole;
  assert.match(text, /data: \[DONE\]\n\n$/);
  const events = text.split('\n\n').filter(Boolean);
  assert.ok(events.length > 10, 'the stream was long enough to be in flight');
  const refused = await new Promise<string | undefined>((resolve) =>
    connect(s.port, '127.0.0.1')
      .on('connect', () => resolve(undefined))
      .on('error', (e: NodeJS.ErrnoException) => resolve(e.code)),
  );
  assert.is(refused, 'ECONNREFUSED');
  assert.equal(await s.exited, { code: 0, signal: null });
});

test('SIGINT: a request whose body is still arriving is answered once it is complete, then exit code 0', async () => {
  const s = await serve();
  const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
  const upload = startUpload(s.port, body, 10);
  await upload.handling;
  s.child.kill('SIGINT');
  await s.line(/"msg":"shutting down"/);
  upload.socket.write(body.slice(10));
  const answer = await upload.closed;
  assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(answer, /\r\nConnection: close\r\n/i);
  assert.equal(await s.exited, { code: 0, signal: null });
});

test('a second signal exits at once: 130 after SIGINT, 143 after SIGTERM', async () => {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    const s = await serve();
    // A request that never completes holds the graceful shutdown open for its whole grace period.
    const upload = startUpload(s.port, '{"model":"gpt-4o"}', 1);
    await upload.handling;
    s.child.kill('SIGTERM');
    await s.line(/"msg":"shutting down"/);
    s.child.kill(signal);
    assert.equal(await s.exited, { code, signal: null });
    upload.socket.destroy();
  }
});

test.run();
