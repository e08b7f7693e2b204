import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { markdown } from '../bench/output.js';
import { combinePaced, pacedRatios } from '../bench/report.js';
import { pacedLoad } from '../bench/pacedClient.js';
import {
  EventCounter,
  LastBytes,
  lateness,
  rawRequest,
  tokenLayout,
  tokensBefore,
  type StreamRecord,
} from '../bench/pacing.js';
import type { BenchResults, PacedFigures } from '../bench/results.js';
import { startProcess, statCpuSeconds } from '../bench/servers.js';
import { chunkFrame } from '../bench/pacedFloor.js';
import { verdicts } from '../bench/targets.js';

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
/** A stream as the servers send it: the role chunk, one chunk per token, the finish chunk and [DONE]. */
const stream = (words: string[]) =>
  chunk({ role: 'assistant', content: '' }) +
  words.map((w) => chunk({ content: w })).join('') +
  chunk({}, 'length') +
  'data: [DONE]\n\n';

test('tokenLayout: the index of the token each event carries, -1 for the others', () => {
  const body = stream(['Here', ' is', ' a']);
  assert.equal(tokenLayout(body, 3), [-1, 0, 1, 2, -1, -1]);
  assert.equal(tokensBefore(tokenLayout(body, 3)), [0, 0, 1, 2, 3, 3]);
});

test('tokenLayout refuses a stream whose count of text events is not the token count asked for', () => {
  assert.throws(() => tokenLayout(stream(['Here', ' is']), 3), /2 events with text, expected one per token \(3\)/);
  assert.throws(() => tokenLayout('data: {"error":{"message":"no"}}\n\n', 1), /0 events with text/);
});

test('EventCounter counts each blank line once, however the reads split the bytes', () => {
  const body = stream(['Here', ' is', ' a']);
  // A chunked HTTP/1.1 response: its head and framing lines end in \r\n, never \n\n.
  const events = body.match(/[^]*?\n\n/g)!;
  const framed = events.map((e) => `${Buffer.byteLength(e).toString(16)}\r\n${e}\r\n`).join('');
  const wire = Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n${framed}0\r\n\r\n`);
  for (let cut = 0; cut <= wire.length; cut++) {
    const counter = new EventCounter();
    const n = counter.feed(wire.subarray(0, cut)) + counter.feed(wire.subarray(cut));
    assert.is(n, events.length, `split at byte ${cut}`);
  }
  const counter = new EventCounter();
  let n = 0;
  for (const byte of wire) n += counter.feed(Uint8Array.of(byte));
  assert.is(n, events.length, 'one byte a read');
  assert.is(new EventCounter().feed(Buffer.from('a\nb\n')), 0);
});

test('LastBytes keeps the end of a response read into a reused buffer, however it is split', () => {
  const wire = Buffer.from('3c\r\ndata: {"x":1}\n\n\r\ne\r\ndata: [DONE]\n\n\r\n0\r\n\r\n');
  const reused = Buffer.alloc(wire.length);
  const read = (last: LastBytes, part: Buffer) => {
    part.copy(reused);
    reused.fill(0, part.length); // what the buffer held beyond this read must not be kept
    last.keep(reused, part.length);
  };
  for (let cut = 0; cut <= wire.length; cut++) {
    const last = new LastBytes(24);
    read(last, wire.subarray(0, cut));
    read(last, wire.subarray(cut));
    assert.equal(last.bytes(), wire.subarray(-24), `split at byte ${cut}`);
  }
  const last = new LastBytes(24);
  for (let i = 0; i < wire.length; i++) read(last, wire.subarray(i, i + 1));
  assert.equal(last.bytes(), wire.subarray(-24), 'one byte a read');
  const short = new LastBytes(24);
  read(short, wire.subarray(0, 5));
  assert.equal(short.bytes(), wire.subarray(0, 5));
});

/** A record of a stream whose events arrived at `times` (ms), sent at `sentAt`. */
const record = (times: number[], sentAt = 0, complete = true, error?: string): StreamRecord => ({
  sentAt,
  arrivals: Float64Array.from(times),
  events: times.length,
  status: 200,
  complete,
  ...(error ? { error } : {}),
});

test('lateness: token k is measured from the first token plus k intervals, the first from the request plus ttft', () => {
  const plan = { tokens: 3, tps: 50, ttftMs: 200 };
  const layout = [-1, 0, 1, 2, -1, -1];
  // On time: the role and first token at 205 (5 ms after ttft), then every 20 ms.
  const onTime = record([205, 205, 225, 245, 265, 265]);
  // The second token 50 ms late (a gap of 70 ms, more than two intervals), the third back on schedule.
  const late = record([1210, 1210, 1280, 1250, 1270, 1270], 1000);
  const f = lateness([onTime, late], layout, plan);
  assert.equal([f.streams, f.completed, f.failed, f.errors, f.tokens, f.gaps], [2, 2, 0, 0, 6, 1]);
  // Lateness of tokens 1 and 2 of both streams: 0, 0, 50, 0 (token 0 is the reference, not counted).
  assert.is(f.latenessP50Ms, 0);
  assert.is(f.latenessMaxMs, 50);
  assert.is(f.latenessP99Ms, 50);
  assert.is(f.firstTokenP99Ms, 10);
});

test('lateness: a stream cut short gives the tokens it got and is failed; one that never answered is an error', () => {
  const plan = { tokens: 3, tps: 50, ttftMs: 200 };
  const layout = [-1, 0, 1, 2, -1, -1];
  const cut = { ...record([200, 200, 260], 0, false), arrivals: Float64Array.from([200, 200, 260, 0, 0, 0]) };
  const refused: StreamRecord = { ...record([], Number.NaN, false, 'ECONNREFUSED'), arrivals: new Float64Array(6) };
  const f = lateness([cut, refused], layout, plan);
  assert.equal([f.completed, f.failed, f.errors, f.tokens, f.gaps], [0, 1, 1, 2, 1]);
  assert.equal(f.errorCodes, { ECONNREFUSED: 1 });
  assert.is(f.latenessMaxMs, 40);
});

test('rawRequest: one HTTP/1.1 request with its length that asks for the connection to close', () => {
  const body = Buffer.from('{"stream":true}');
  const raw = rawRequest('http://127.0.0.1:8080', '/v1/x', { authorization: 'Bearer k' }, body).toString();
  assert.is(
    raw,
    'POST /v1/x HTTP/1.1\r\nhost: 127.0.0.1:8080\r\nauthorization: Bearer k\r\ncontent-length: 15\r\nconnection: close\r\n\r\n{"stream":true}',
  );
});

test('statCpuSeconds reads user and system ticks after the command name, children on request', () => {
  const rest = 'S 1 2 3 4 5 6 7 8 9 10 150 50 30 20 20 0 1';
  const stat = `42 (node ) worker) ${rest}`;
  assert.is(statCpuSeconds(stat), 2);
  assert.is(statCpuSeconds(stat, true), 2.5);
});

test('the paced streams are read by the client: counted, complete with all events and [DONE], or not', async () => {
  const body = stream(['a', 'b']);
  const events = body.match(/[^]*?\n\n/g)!;
  const whole: Record<string, string> = {
    '/whole': body,
    '/no-done': events.slice(0, -1).join('') + chunk({}),
    '/extra': events.slice(0, -1).join('') + chunk({}) + events.at(-1)!,
  };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const all = whole[req.url!];
      if (all) return void res.end(all);
      // Cut after two events, once they have left (destroyed at once, the writes would be dropped).
      res.write(events.slice(0, 2).join(''), () => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const run = async (path: string) =>
      (
        await pacedLoad({
          url,
          request: rawRequest(url, path, {}, Buffer.from('{}')),
          count: 3,
          rampMs: 0,
          events: events.length,
          timeoutMs: 10_000,
        })
      ).records;
    const complete = await run('/whole');
    assert.equal(
      complete.map((r) => [r.status, r.events, r.complete]),
      [
        [200, 5, true],
        [200, 5, true],
        [200, 5, true],
      ],
    );
    assert.ok(complete.every((r) => r.arrivals[4]! >= r.sentAt));
    assert.ok((await run('/cut')).every((r) => r.events === 2 && !r.complete));
    assert.ok((await run('/no-done')).every((r) => r.events === 5 && !r.complete));
    assert.ok((await run('/extra')).every((r) => r.events === 6 && !r.complete));
  } finally {
    server.close();
  }
});

test('chunkFrame: the size in hex, CRLF, the bytes, CRLF', () => {
  assert.is(chunkFrame(Buffer.from('x'.repeat(26))).toString(), `1a\r\n${'x'.repeat(26)}\r\n`);
});

test('the heap floor sends every stream the captured answer whole, in chunks node:http reads, either head', async () => {
  const body = stream(['a', 'b', 'c', 'd']);
  const layout = tokenLayout(body, 4);
  const dir = mkdtempSync(join(tmpdir(), 'uam-floor-'));
  const file = join(dir, 'answer.json');
  writeFileSync(
    file,
    JSON.stringify({
      contentType: 'text/event-stream',
      body: Buffer.from(body).toString('base64'),
      tokensBefore: tokensBefore(layout),
    }),
  );
  const script = fileURLToPath(new URL('../bench/pacedFloor.ts', import.meta.url));
  try {
    for (const head of ['at-once', 'first-event']) {
      const floor = await startProcess(
        [script, '--answer', file, '--ttft', '1', '--tps', '1000', '--head', head],
        null,
        ['--import', 'tsx'],
      );
      try {
        const { records } = await pacedLoad({
          url: floor.url,
          request: rawRequest(floor.url, '/v1/chat/completions', {}, Buffer.from('{}')),
          count: 5,
          rampMs: 0,
          events: layout.length,
          timeoutMs: 10_000,
        });
        assert.ok(
          records.every((r) => r.complete && r.events === layout.length),
          head,
        );
        const got = await new Promise<{ te: string | undefined; text: string }>((resolve, reject) =>
          request(`${floor.url}/v1/chat/completions`, { method: 'POST' }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (text += d));
            res.on('end', () => resolve({ te: res.headers['transfer-encoding'], text }));
          })
            .on('error', reject)
            .end('{}'),
        );
        assert.is(got.te, 'chunked', head);
        assert.is(got.text, body, head);
      } finally {
        await floor.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const figures = (latenessP99Ms: number, firstTokenP99Ms: number, cpuUsPerToken: number, completed = 1000) =>
  ({
    streams: 1000,
    completed,
    failed: 1000 - completed,
    errors: 0,
    errorCodes: {},
    tokens: 256_000,
    latenessP50Ms: 1,
    latenessP99Ms,
    latenessMaxMs: latenessP99Ms * 2,
    firstTokenP99Ms,
    gaps: 0,
    cpuSeconds: (cpuUsPerToken * 256_000) / 1e6,
    cpuUsPerToken,
    peakRssMiB: 150,
    seconds: 7,
    coreOtherSeconds: 0,
    client: { cpuShare: 0.3, loopDelayP99Ms: 2 },
  }) satisfies PacedFigures;

const results = (mock: PacedFigures, aimock: PacedFigures | null): BenchResults => ({
  machine: {},
  options: {},
  scenarios: [],
  paced: { streams: 1000, tokens: 256, tps: 50, ttftMs: 200, rampS: 1, floor: figures(10, 20, 20), mock, aimock },
});

test('paced verdicts: the mock against the heap floor and aimock, its memory and its streams', () => {
  const met = (r: BenchResults) => Object.fromEntries(verdicts(r).map((v) => [v.target, v.met]));
  const good = met(results({ ...figures(12.5, 40, 22), peakRssMiB: 190 }, figures(150, 30, 30)));
  assert.equal(Object.values(good), [true, true, true, true, true, true]);
  const bad = met(results({ ...figures(12.6, 41, 22.1, 999), peakRssMiB: 190.1 }, figures(125, 30, 30)));
  assert.equal(bad, {
    '1000 paced streams: token lateness p99, mock / heap floor': false,
    '1000 paced streams: first-token lateness p99, mock / heap floor': false,
    '1000 paced streams: CPU per token, mock / heap floor': false,
    '1000 paced streams: peak RSS, mock - heap floor': false,
    '1000 paced streams: every stream of the mock whole, none an error': false,
    '1000 paced streams: token lateness p99, aimock / mock': false,
  });
  const erred = { ...figures(12, 40, 22), errors: 1, errorCodes: { ECONNRESET: 1 } };
  assert.is(met(results(erred, null))['1000 paced streams: every stream of the mock whole, none an error'], false);
  assert.is(met(results(figures(12, 40, 22), null))['1000 paced streams: token lateness p99, aimock / mock'], null);
});

test('paced ratios are the median of the rounds own ratios, not the ratio of the medians', () => {
  // Round 2's host was slow for both: its ratio is fine, though its figures are not the medians.
  const floor = [figures(10, 20, 20), figures(100, 200, 40), figures(20, 30, 20)];
  const mock = [figures(12, 40, 22), figures(110, 220, 42), { ...figures(40, 30, 30), peakRssMiB: 200 }];
  const r = pacedRatios({ floor: combinePaced(floor), mock: combinePaced(mock), perRound: { floor, mock } });
  assert.is(r.lateness, 1.2);
  assert.is(r.firstToken, 1.1);
  assert.is(r.cpu, 1.1);
  assert.is(r.rssOverMiB, 0);
  // The medians' own ratio would be 40 / 20 = 2: over the target though no round but one was.
  assert.is(combinePaced(mock).latenessP99Ms / combinePaced(floor).latenessP99Ms, 2);
  const paced = { ...results(figures(1, 1, 1), null).paced!, floor: combinePaced(floor), mock: combinePaced(mock) };
  const v = verdicts({ ...results(figures(1, 1, 1), null), paced: { ...paced, rounds: 3, perRound: { floor, mock } } });
  assert.ok(v.find((x) => x.target.endsWith('token lateness p99, mock / heap floor'))!.met);
  const md = markdown({
    ...results(figures(1, 1, 1), null),
    paced: { ...paced, rounds: 3, perRound: { floor, mock } },
  });
  assert.match(
    md,
    /\| 2 \| 100\.0 \/ 110\.0 \| 1\.10x \| 200\.0 \/ 220\.0 \| 40\.0 \/ 42\.0 \| 1\.05x \| 150\.0 \/ 150\.0 \|/,
  );
});

test('rounds combine by their medians, and completeness by the worst round', () => {
  const one = figures(30, 100, 20);
  assert.is(combinePaced([one]), one, 'one round is itself');
  const disturbed = { ...figures(700, 2000, 30, 990), errors: 10, errorCodes: { timeout: 10 }, peakRssMiB: 170 };
  const c = combinePaced([figures(40, 120, 21), disturbed, figures(35, 90, 19)]);
  assert.is(c.latenessP99Ms, 40);
  assert.is(c.firstTokenP99Ms, 120);
  assert.is(c.cpuUsPerToken, 21);
  assert.is(c.latenessMaxMs, 80);
  assert.is(c.completed, 990, 'the fewest complete');
  assert.is(c.errors, 10);
  assert.equal(c.errorCodes, { timeout: 10 });
  assert.is(c.peakRssMiB, 170, 'the highest peak');
  assert.is(c.cpuSeconds, (21 * 256_000) / 1e6);
  assert.is(combinePaced([figures(40, 120, 21), { ...one, cpuUsPerToken: null }]).cpuUsPerToken, null);
});

test('the paced table has a row per server, aimock marked when not measured', () => {
  const md = markdown(results(figures(15, 40, 25), null));
  assert.match(md, /\| heap floor \(node:http\) \| 1000 \/ 0 \/ 0 \| 1\.0 \/ 10\.0 \/ 20\.0 \| 20\.0 \|/);
  assert.match(md, /\| mock \| 1000 \/ 0 \/ 0 \| 1\.0 \/ 15\.0 \/ 30\.0 \| 40\.0 \|/);
  assert.match(md, /\| aimock \| not measured \|/);
  assert.not.match(md, /--metrics off/);
  const unmetered = markdown({
    ...results(figures(15, 40, 25), null),
    paced: { ...results(figures(15, 40, 25), null).paced!, unmetered: figures(14, 39, 24) },
  });
  assert.match(unmetered, /\| mock, --metrics off \| 1000 \/ 0 \/ 0 \| 1\.0 \/ 14\.0 \/ 28\.0 \| 39\.0 \|/);
});

test.run();
