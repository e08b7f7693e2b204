// The request log loses nothing silently: every request has its line while the output keeps up, and
// when it cannot (a pipe nobody reads), the lines dropped are counted in /__health and reported by a
// warning line once the output takes lines again. No test here asserts on time.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LogWriter } from '../../src/server/logWriter.js';
import { start } from '../../src/server/server.js';
import { KEY, waitFor, withLogFile } from '../support/index.js';

const CHAT_BODY = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say this is a test' }] });

/** Sends `count` chat completions over `connections` keep-alive connections; resolves with the statuses seen. */
async function burst(url: string, count: number, connections = 32): Promise<Map<number, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const statuses = new Map<number, number>();
  let sent = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        `${url}/v1/text-provider/chat/completions`,
        { method: 'POST', agent, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => {
            statuses.set(res.statusCode!, (statuses.get(res.statusCode!) ?? 0) + 1);
            resolve();
          });
        },
      );
      req.on('error', reject);
      req.end(CHAT_BODY);
    });
  const worker = async () => {
    while (sent < count) {
      sent++;
      await one();
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    agent.destroy();
  }
  return statuses;
}

async function health(url: string): Promise<{ status: number; body: { status: string; log?: { dropped: number } } }> {
  const res = await fetch(`${url}/__health`);
  return { status: res.status, body: (await res.json()) as { status: string; log?: { dropped: number } } };
}

/** The first match of `re` in what a child prints; fails if the child exits first. */
function printed(child: ChildProcess, re: RegExp): Promise<string> {
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  return waitFor(
    () => `${re} from the child; it printed: ${text.slice(-500)}`,
    () => re.exec(text)?.[0],
    { on: [child.stdout!, 'data'], failOn: [child, 'exit'] },
  );
}

test('LogWriter: every line reaches a file, in order, and flush waits for them', () =>
  withLogFile(async (fd, file) => {
    const writer = new LogWriter(fd, { maxWrite: 4096 });
    for (let i = 0; i < 5000; i++) writer.write(`{"n":${i}}\n`);
    await new Promise<void>((resolve) => writer.flush(() => resolve()));
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    assert.is(lines.length, 5000);
    assert.ok(lines.every((l, i) => l === `{"n":${i}}`));
    assert.is(writer.dropped, 0);
    writer.flush(); // no callback: nothing to do
  }));

test('LogWriter: multi-byte text and lines longer than its buffer arrive whole and in order', () =>
  withLogFile(async (fd, file) => {
    const writer = new LogWriter(fd, { minWrite: 4096, maxWrite: 8192 });
    const expected: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const text = i % 500 === 7 ? 'x'.repeat(20_000) : i % 3 === 0 ? `日本語 ${i} 😀` : `line ${i}`;
      expected.push(JSON.stringify({ n: i, text }));
      writer.write(`${expected[i]}\n`);
    }
    await new Promise<void>((resolve) => writer.flush(() => resolve()));
    assert.equal(readFileSync(file, 'utf8').split('\n').slice(0, -1), expected);
    assert.is(writer.dropped, 0);
  }));

test('LogWriter: lines written as bytes (writeWith) and as text keep their order, also past its buffer', () =>
  withLogFile(async (fd, file) => {
    const writer = new LogWriter(fd, { minWrite: 4096, maxWrite: 8192 });
    const expected: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const line = `${JSON.stringify({ n: i, text: i % 400 === 9 ? 'y'.repeat(10_000) : `é ${i}` })}\n`;
      expected.push(line.slice(0, -1));
      if (i % 2 === 0) writer.write(line);
      else {
        const bytes = Buffer.from(line, 'utf8');
        // Room for more than the line takes, as a writer of bytes asks for its most.
        writer.writeWith(bytes.length + 10, (buf, at) => at + bytes.copy(buf, at));
      }
    }
    await new Promise<void>((resolve) => writer.flush(() => resolve()));
    assert.equal(readFileSync(file, 'utf8').split('\n').slice(0, -1), expected);
    assert.is(writer.dropped, 0);
  }));

test('LogWriter: lines kept aside (writeLater) keep their place among lines given directly, and flush writes them', () =>
  withLogFile(async (fd, file) => {
    const writer = new LogWriter(fd, { minWrite: 4096, maxWrite: 8192 });
    const expected: string[] = [];
    let aside: string[] = [];
    let gathered = 0;
    const gather = () => {
      gathered++;
      const lines = aside;
      aside = [];
      for (const line of lines) writer.write(`${line}\n`);
    };
    // The last two lines are kept aside, for the flush to gather.
    for (let i = 0; i < 3002; i++) {
      const line = JSON.stringify({ n: i, text: i % 700 === 5 ? 'z'.repeat(9000) : `${i}` });
      expected.push(line);
      if (i % 7 === 3) writer.write(`${line}\n`);
      else {
        aside.push(line);
        writer.writeLater(gather);
      }
    }
    await new Promise<void>((resolve) => writer.flush(() => resolve()));
    assert.equal(readFileSync(file, 'utf8').split('\n').slice(0, -1), expected);
    assert.is(aside.length, 0);
    // Once before each direct line (each follows lines kept aside), and once at the flush.
    assert.is(gathered, expected.filter((_, i) => i % 7 === 3).length + 1);
    assert.is(writer.dropped, 0);
  }));

test('LogWriter: lines kept aside go out without a flush, and past its bound are dropped and counted', () =>
  withLogFile(async (fd, file) => {
    const writer = new LogWriter(fd, { maxPending: 1000 });
    const line = '{"n":"x"}\n'; // 10 bytes
    writer.writeLater(() => {
      for (let i = 0; i < 200; i++) writer.write(line);
    });
    // No flush: the writer gathers them for its next write, and the dropped ones get their warning.
    let lines: string[] = [];
    await waitFor('101 lines in the file', () => {
      lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
      return lines.length >= 101;
    });
    assert.is(writer.dropped, 100);
    assert.is(lines.length, 101);
    assert.is(lines.filter((l) => l === '{"n":"x"}').length, 100);
    assert.is((JSON.parse(lines.find((l) => l.includes('dropped'))!) as { dropped: number }).dropped, 100);
  }));

test('LogWriter: one call of its next write is pending at most: lines kept aside during a write, and a flush during a wait, add none', () =>
  withLogFile(async (fd, file) => {
    const writer = new LogWriter(fd, { delayMs: 20 });
    const next = (writer as unknown as { next: () => void }).next;
    // Every call of the writer's `next` handed to a timer or an immediate, from then until it runs or is cleared.
    const pending = new Set<unknown>();
    let most = 0;
    const real = { setTimeout, setImmediate, clearTimeout };
    const track = <T>(fn: unknown, hand: (run: () => void) => T): T => {
      const run = fn as () => void;
      if (fn !== next) return hand(run);
      const handle: T = hand(() => {
        pending.delete(handle);
        run();
      });
      pending.add(handle);
      most = Math.max(most, pending.size);
      return handle;
    };
    const timers = globalThis as unknown as Record<
      'setTimeout' | 'setImmediate' | 'clearTimeout',
      (...args: unknown[]) => unknown
    >;
    timers.setTimeout = (fn, ms) => track(fn, (run) => real.setTimeout(run, ms as number));
    timers.setImmediate = (fn) => track(fn, (run) => real.setImmediate(run));
    timers.clearTimeout = (handle) => {
      pending.delete(handle);
      real.clearTimeout(handle as NodeJS.Timeout);
    };
    // The writer's waits do not keep the process alive; a server's sockets would.
    const alive = setInterval(() => undefined, 1000);
    try {
      // As a server logging every request does: lines noted, the writer told when the first of a batch
      // is, and the batch made when the writer gathers it; here a line is noted while each write is out.
      let queued = 0;
      let lines = 0;
      let gathers = 0;
      let chained!: () => void;
      const chain = new Promise<void>((resolve) => (chained = resolve));
      const note = (): void => {
        if (queued++ === 0) writer.writeLater(gather);
      };
      const gather = (): void => {
        gathers++;
        for (; queued > 0; queued--) writer.write(`{"n":${lines++}}\n`);
        if (gathers < 8) queueMicrotask(note);
        else chained();
      };
      note();
      await chain;
      await new Promise<void>((resolve) => writer.flush(() => resolve()));
      // A flush while the next write waits its delay: the wait is cut short, not doubled.
      note();
      await new Promise<void>((resolve) => writer.flush(() => resolve()));
      assert.is(most, 1, `${most} calls of the next write pending at once`);
      assert.is(gathers, 9);
      assert.is(readFileSync(file, 'utf8').split('\n').filter(Boolean).length, lines);
      assert.is(lines, 9);
    } finally {
      Object.assign(globalThis, real);
      clearInterval(alive);
    }
  }));

test('LogWriter: a line written as bytes past its bound is dropped and counted, never written', () =>
  withLogFile(async (fd, file) => {
    const writer = new LogWriter(fd, { maxPending: 1000 });
    let kept = 0;
    let filled = 0;
    const line = Buffer.from('{"n":"x"}\n'); // 10 bytes
    for (let i = 0; i < 200; i++) {
      const ok = writer.writeWith(line.length, (buf, at) => {
        filled++;
        return at + line.copy(buf, at);
      });
      if (ok) kept++;
    }
    assert.is(kept, 100);
    assert.is(filled, 100);
    assert.is(writer.dropped, 100);
    await new Promise<void>((resolve) => writer.flush(() => resolve()));
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    assert.is((JSON.parse(lines[0]!) as { dropped: number }).dropped, 100);
    assert.is(lines.length, 101);
  }));

test('LogWriter: into a pipe that takes part of each write, every line arrives whole and in order', async () => {
  // A named pipe (64 KiB) and a reader that echoes it: the pipe takes part of each 256 KiB write, or
  // nothing (EAGAIN) until the reader has read, so writes end part-way through a line.
  const dir = mkdtempSync(join(tmpdir(), 'uam-fifo-'));
  const fifo = join(dir, 'log');
  execFileSync('mkfifo', [fifo]);
  // Opened for reading too, so the open neither waits for the reader nor fails before it is there.
  const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
  const child = spawn(
    process.execPath,
    ['-e', `require('node:fs').createReadStream(${JSON.stringify(fifo)}).pipe(process.stdout)`],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const received: Buffer[] = [];
  child.stdout!.on('data', (d: Buffer) => received.push(d));
  const ended = new Promise((resolve) => child.stdout!.once('end', resolve));
  const lineOf = (i: number) => JSON.stringify({ n: i, text: i % 997 === 3 ? 'z'.repeat(9_000) : 'ü'.repeat(i % 40) });
  try {
    const writer = new LogWriter(fd, { minWrite: 4096, maxWrite: 256 * 1024, retryMs: 1 });
    for (let i = 0; i < 20_000; i++) {
      if (i % 2) writer.write(`${lineOf(i)}\n`);
      else {
        const bytes = Buffer.from(`${lineOf(i)}\n`);
        writer.writeWith(bytes.length, (buf, at) => at + bytes.copy(buf, at));
      }
    }
    await new Promise<void>((resolve) => writer.flush(() => resolve()));
    assert.is(writer.dropped, 0);
  } finally {
    closeSync(fd);
  }
  await ended;
  rmSync(dir, { recursive: true, force: true });
  const lines = Buffer.concat(received).toString('utf8').split('\n').slice(0, -1);
  assert.is(lines.length, 20_000);
  assert.ok(lines.every((l, i) => l === lineOf(i)));
});

test('LogWriter: past its bound it drops and counts, then writes a warning with the count', () =>
  withLogFile(async (fd, file) => {
    const writer = new LogWriter(fd, { maxPending: 1000 });
    let kept = 0;
    for (let i = 0; i < 200; i++) if (writer.write(`{"n":${String(i).padStart(3, '0')}}\n`)) kept++; // 10 characters a line
    assert.is(kept, 100);
    assert.is(writer.dropped, 100);
    await new Promise<void>((resolve) => writer.flush(() => resolve()));
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const warning = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.equal([warning.level, warning.dropped, warning.droppedTotal], ['warn', 100, 100]);
    assert.is(lines.length, 101);
  }));

test('LogWriter: an output that is gone costs the lines, counted, never the process', async () => {
  const child = spawn(
    process.execPath,
    ['-e', "require('node:fs').closeSync(0); console.log('closed'); setInterval(() => {}, 1000);"],
    { stdio: ['pipe', 'pipe', 'ignore'] },
  );
  try {
    const fd = (child.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    await printed(child, /closed/);
    const writer = new LogWriter(fd);
    writer.write('a\n');
    writer.write('b\n');
    await new Promise<void>((resolve) => writer.flush(() => resolve()));
    assert.is(writer.dropped, 2);
  } finally {
    child.kill('SIGKILL');
  }
});

test('serve with stdout to a file: a burst of 20,000 requests leaves exactly 20,000 request lines', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'uam-log-'));
  const file = join(dir, 'stdout.log');
  const out = openSync(file, 'w');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--host', '127.0.0.1'],
    { stdio: ['ignore', out, 'inherit'] },
  );
  closeSync(out);
  try {
    // The banner goes to a file, which says nothing when written to: looked for until it is there.
    const url = await waitFor('the banner of serve', () => /listening on (\S+)/.exec(readFileSync(file, 'utf8'))?.[1], {
      failOn: [child, 'exit'],
    });
    const N = 20_000;
    const statuses = await burst(url, N);
    assert.equal([...statuses], [[200, N]]);
    assert.equal(await health(url), { status: 200, body: { status: 'ok', log: { dropped: 0 } } });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    const requests = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{') && l.includes('"msg":"request"'));
    assert.is(requests.length, N);
    assert.ok(requests.every((l) => (JSON.parse(l) as { status: number }).status === 200));
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a pipe nobody reads: lines are dropped and counted in /__health, and a warning follows once it is read', async () => {
  // The reader: a process that leaves its stdin (our log's pipe) unread until it gets SIGUSR2.
  const reader = spawn(
    process.execPath,
    ['-e', "process.once('SIGUSR2', () => process.stdin.pipe(process.stdout)); setInterval(() => {}, 1000);"],
    {
      stdio: ['pipe', 'pipe', 'ignore'],
    },
  );
  const fd = (reader.stdin as unknown as { _handle: { fd: number } })._handle.fd;
  const writer = new LogWriter(fd, { maxPending: 64 * 1024, retryMs: 10 });
  const mock = await start({ port: 0, host: '127.0.0.1', logLevel: 'info' }, { log: writer });
  try {
    const statuses = await burst(mock.url, 2000);
    assert.equal([...statuses], [[200, 2000]], 'every request is answered');
    const { status, body } = await health(mock.url);
    assert.is(status, 200);
    assert.ok(body.log!.dropped > 0, JSON.stringify(body));
    assert.is(body.log!.dropped, writer.dropped);
    const warning = printed(reader, /\{"level":"warn"[^\n]*"msg":"log lines dropped[^\n]*\n/);
    reader.kill('SIGUSR2');
    const line = JSON.parse(await warning) as { dropped: number; droppedTotal: number };
    assert.ok(line.dropped > 0 && line.droppedTotal <= writer.dropped, JSON.stringify(line));
  } finally {
    await mock.close();
    reader.kill('SIGKILL');
  }
});

test.run();
