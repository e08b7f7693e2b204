/**
 * `node --import tsx bench/bodies.ts`: the worst request bodies that fit under each operation's size limit,
 * each sent alone to a fresh mock (as `npm start` runs it, logging to a file) while a client polls
 * `GET /__health` back to back. Prints, per body: the status, the longest a health check waited (the event
 * loop's stall, as a client sees it: on a busy machine it includes the time the server waited for a core), the longest
 * the server's event loop was held by its own work (bench/loopLag.mjs, loaded into it), the CPU it used meanwhile, and how much its RSS grew (its peak less its RSS before), in MiB and as a multiple of the
 * body's size. Asserts nothing; docs/reliability.md quotes its figures.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBuilt, startMock, workDir, type Server } from './servers.js';

const USAGE = `Usage: node --import tsx bench/bodies.ts [options]
  --only OPS        comma-separated operation ids (default: every operation that takes a body)
  --kinds KINDS     comma-separated body kinds (default: all of them)
  --limit BYTES     the size to fill when the server states none (default: the server's 413 tells it)
  --together N      also send N of each operation's worst body at once (default 4)
  --json FILE       write every figure as JSON
`;

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    kinds: { type: 'string' },
    limit: { type: 'string' },
    together: { type: 'string' },
    json: { type: 'string' },
    help: { type: 'boolean' },
  },
});
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

const KEY = 'sk-mock-default';
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** An operation with a body: its path and a valid body the hostile part is added to (as `x`, or in place of a field). */
interface Target {
  readonly id: string;
  readonly path: string;
  readonly method: 'POST' | 'PUT' | 'GET';
  readonly base: Record<string, unknown>;
  /** The field of `base` a huge string goes into, to reach the handler. */
  readonly textField?: string;
}

const TARGETS: readonly Target[] = [
  {
    id: 'chat.completions',
    path: '/text-provider/chat/completions',
    method: 'POST',
    base: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
  },
  {
    id: 'images.generate',
    path: '/text-provider/images/generations',
    method: 'POST',
    base: { model: 'dall-e-3', prompt: 'a cat' },
  },
  {
    id: 'images.edit',
    path: '/image-provider/image-edit',
    method: 'POST',
    base: { prompt: 'a cat', image: PNG_1X1 },
    textField: 'prompt',
  },
  {
    id: 'video.generate',
    path: '/video-provider/generate',
    method: 'POST',
    base: { model: 'gen3a_turbo', mode: 'text_to_video', prompt: 'waves' },
    textField: 'prompt',
  },
  { id: 'voice.tts', path: '/voice-provider/tts', method: 'POST', base: { text: 'Hello', voice_id: 'rachel' } },
  {
    id: 'cloud.speech',
    path: '/cloud-provider/speech',
    method: 'POST',
    base: { text: 'Hello', voice: 'en-US-JennyNeural' },
  },
  { id: 'admin.faults.add', path: '/__admin/faults', method: 'POST', base: { fault: { kind: 'status', status: 500 } } },
  { id: 'admin.latency.update', path: '/__admin/latency', method: 'PUT', base: { seed: 1 } },
];

/** A body kind: the text of a JSON value of about `room` bytes that costs the most per byte in one way. */
type Kind = (room: number) => string;

const repeat = (item: string, room: number, open = '[', close = ']'): string =>
  open + `${item},`.repeat(Math.max(0, Math.floor((room - 2) / (item.length + 1)) - 1)) + item + close;

const KINDS: Record<string, Kind> = {
  // The floor: a valid body of a few bytes, so that what the polling itself costs is seen.
  none: () => '0',
  emptyObjects: (room) => repeat('{}', room),
  emptyArrays: (room) => repeat('[]', room),
  tinyNumbers: (room) => repeat('0', room),
  shortStrings: (room) => repeat('""', room),
  distinctKeys: (room) => {
    const parts: string[] = [];
    let used = 2;
    for (let i = 0; used < room - 16; i++) {
      const part = `"${i.toString(36)}":0`;
      parts.push(part);
      used += part.length + 1;
    }
    return `{${parts.join(',')}}`;
  },
  // Allowed nesting, repeated: each item as deep as the depth limit allows below the body's own levels.
  deepNesting: (room) => {
    const depth = 250;
    return repeat('['.repeat(depth) + ']'.repeat(depth), room);
  },
  hugeString: (room) => `"${'a'.repeat(room - 2)}"`,
  // A huge string where the handler reads it (a chat message's content, a prompt).
  hugeText: (room) => `"${'lorem ipsum dolor sit amet '.repeat(Math.ceil(room / 27)).slice(0, room - 2)}"`,
  // The same where the tokenizer's merge cache never helps: random words (seeded, the same every run).
  randomText: (room) => {
    let seed = 1;
    const words: string[] = [];
    for (let used = 2; used < room - 16;) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const word = seed.toString(36);
      words.push(word);
      used += word.length + 1;
    }
    return `"${words.join(' ')}"`;
  },
  // Many small messages (chat): the handler counts the tokens of every one.
  manyMessages: (room) => repeat('{"role":"user","content":"hi"}', room),
};

/** The body of `kind` for `target`, as close under `limit` bytes as it goes. */
function bodyOf(target: Target, kind: string, limit: number): Buffer | null {
  const base = JSON.stringify(target.base);
  const room = limit - base.length - 64;
  const value = KINDS[kind]!(room);
  if (kind === 'manyMessages') {
    if (target.id !== 'chat.completions') return null;
    return Buffer.from(JSON.stringify({ model: 'gpt-4o' }).slice(0, -1) + `,"messages":${value}}`);
  }
  if (kind === 'hugeText' || kind === 'randomText') {
    if (target.id === 'chat.completions')
      return Buffer.from(`{"model":"gpt-4o","messages":[{"role":"user","content":${value}}]}`);
    if (!target.textField) return null;
    const rest = JSON.stringify({ ...target.base, [target.textField]: undefined });
    return Buffer.from(`{"${target.textField}":${value},${rest.slice(1)}`);
  }
  return Buffer.from(`${base.slice(0, -1)},"x":${value}}`);
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

function send(
  server: Server,
  target: Pick<Target, 'path' | 'method'>,
  body: Buffer | null,
): Promise<{ status: number; text: string }> {
  const url = new URL(target.path, server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: body ? target.method : 'GET',
        agent,
        headers: body
          ? {
              authorization: `Bearer ${KEY}`,
              'content-type': 'application/json',
              'content-length': body.length,
            }
          : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

const LOOP_LAG = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, 'loopLag.mjs');
const LAG_FILE = join(workDir(), 'loop-lag');
process.env.UAM_LOOP_LAG_FILE = LAG_FILE;

/** The longest the server's event loop was held since the last call (bench/loopLag.mjs, in the server), in ms. */
async function loopLag(pid: number): Promise<number> {
  writeFileSync(LAG_FILE, '');
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setTimeout(r, 10));
    const text = readFileSync(LAG_FILE, 'utf8');
    if (text) return Number(text);
  }
  return NaN;
}

const rssKiB = (pid: number, field: 'VmRSS' | 'VmHWM'): number =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

/** Resets the peak RSS the kernel keeps for a process (VmHWM), so that the next peak is this body's. */
const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, '5');

/** Polls /__health back to back until `done`; resolves with the longest wait. */
async function pollHealth(server: Server, done: () => boolean): Promise<number> {
  let longest = 0;
  while (!done()) {
    const started = performance.now();
    await send(server, { path: '/__health', method: 'GET' }, null);
    longest = Math.max(longest, performance.now() - started);
    await new Promise((r) => setTimeout(r, 2));
  }
  return longest;
}

interface Row {
  operation: string;
  kind: string;
  bytes: number;
  together: number;
  status: string;
  code: string;
  stallMs: number;
  /** The longest the server's event loop was held by its own work (bench/loopLag.mjs). */
  heldMs: number;
  /** CPU the server used meanwhile (the health checks' included): the most the event loop can have been held. */
  cpuMs: number;
  rssGrowthMiB: number;
  perBodyByte: number;
}

async function measure(target: Target, kind: string, limit: number, together: number): Promise<Row | null> {
  const body = bodyOf(target, kind, limit);
  if (!body) return null;
  const server = await startMock(null, [], ['--import', LOOP_LAG], join(workDir(), 'bodies.log'));
  try {
    // Warm up: the operation's path, and the chat path, which loads the tokenizer's tables (the server loads them
    // a step at a time after it starts: 25 MiB and a few hundred ms of CPU the bodies measured must not be charged).
    await send(server, target, Buffer.from(JSON.stringify(target.base)));
    await send(server, TARGETS[0]!, Buffer.from(JSON.stringify(TARGETS[0]!.base)));
    await send(server, { path: '/__health', method: 'GET' }, null);
    await new Promise((r) => setTimeout(r, 1000));
    await loopLag(server.pid); // from here on
    const before = rssKiB(server.pid, 'VmRSS');
    const cpuBefore = server.cpuSeconds() ?? NaN;
    resetPeak(server.pid);
    let finished = false;
    // NaN when the server dies of the bodies (its connection reset).
    const polling = pollHealth(server, () => finished).catch(() => NaN);
    // A server that dies of a body answers with a reset connection: status 0.
    const answers = await Promise.all(
      Array.from({ length: together }, () => send(server, target, body).catch(() => ({ status: 0, text: '' }))),
    );
    finished = true;
    const stallMs = await polling;
    const cpuMs = ((server.cpuSeconds() ?? NaN) - cpuBefore) * 1000;
    const heldMs = await loopLag(server.pid).catch(() => NaN);
    let growth = NaN;
    try {
      growth = (rssKiB(server.pid, 'VmHWM') - before) / 1024;
    } catch {
      // the server is gone
    }
    const code = answers[0]!.status === 200 ? '' : (/"code":"([^"]*)"/.exec(answers[0]!.text)?.[1] ?? '');
    return {
      operation: target.id,
      kind,
      bytes: body.length,
      together,
      status: [...new Set(answers.map((a) => a.status))].join('/'),
      code,
      stallMs: Math.round(stallMs),
      cpuMs: Math.round(cpuMs),
      heldMs,
      rssGrowthMiB: Math.round(growth * 10) / 10,
      perBodyByte: Math.round(((growth * 1024 * 1024) / (body.length * together)) * 10) / 10,
    };
  } finally {
    await server.stop();
  }
}

/** The body limit of an operation, read from the 413 the server gives a body one byte too large for any limit. */
async function limitOf(target: Target): Promise<number> {
  if (values.limit) return Number(values.limit);
  const server = await startMock(null, [], [], join(workDir(), 'limit.log'));
  try {
    // A Content-Length far past any limit is refused before a byte is read; the message states the limit.
    const answer = await new Promise<string>((resolve, reject) => {
      const req = request(new URL(target.path, server.url), {
        method: target.method,
        headers: {
          authorization: `Bearer ${KEY}`,
          'content-type': 'application/json',
          'content-length': 1 << 30,
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    const m = /the limit is (\d+) bytes/.exec(answer);
    if (!m) throw new Error(`no limit stated by ${target.id}: ${answer}`);
    return Number(m[1]);
  } finally {
    await server.stop();
  }
}

async function main() {
  process.stdout.write(`${ensureBuilt()}\n`);
  const only = values.only?.split(',');
  const kinds = values.kinds?.split(',') ?? Object.keys(KINDS);
  const together = Number(values.together ?? 4);
  const rows: Row[] = [];
  const print = (r: Row) =>
    process.stdout.write(
      `${r.operation.padEnd(18)} ${r.kind.padEnd(13)} ${String(r.together).padStart(2)}x ${(r.bytes / 1048576).toFixed(1).padStart(6)} MiB  ` +
        `${r.status.padEnd(4)} ${r.code.padEnd(24)} stall ${String(r.stallMs).padStart(6)} ms  ` +
        `held ${String(r.heldMs).padStart(5)} ms  CPU ${String(r.cpuMs).padStart(6)} ms  ` +
        `RSS +${String(r.rssGrowthMiB).padStart(7)} MiB (${r.perBodyByte}x)\n`,
    );
  for (const target of TARGETS.filter((t) => !only || only.includes(t.id))) {
    const limit = await limitOf(target);
    process.stdout.write(`${target.id}: limit ${limit} bytes\n`);
    let worst: { kind: string; growth: number } | undefined;
    for (const kind of kinds) {
      const row = await measure(target, kind, limit, 1);
      if (!row) continue;
      rows.push(row);
      print(row);
      if (!worst || row.rssGrowthMiB > worst.growth) worst = { kind, growth: row.rssGrowthMiB };
    }
    if (worst && together > 1) {
      const row = await measure(target, worst.kind, limit, together);
      if (row) {
        rows.push(row);
        print(row);
      }
    }
  }
  if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));
  agent.destroy();
}

await main();
