// Proxy, record and replay, end to end over loopback: a second mock is the "real service" upstream.
// A session of all seven operations is recorded through the proxy, the upstream is stopped, and the
// replay must give the same statuses and bodies, streams paced with the recorded gaps; a planted
// departure upstream shows up as a violation in the header, the journal and the report; no key is
// written to any cassette, report or log line.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { start, type RunningMock } from '../../src/server/server.js';
import { serveConfig } from '../../src/cli/main.js';
import { startMockServer } from '../../src/server/programmatic.js';
import { defaultKeys } from '../../src/domain/config.js';
import { normaliseRequest, requestHash } from '../../src/relay/cassette.js';
import { RelayedStreamFault } from '../../src/relay/streamFault.js';
import { operation } from '../../src/contract/operations.js';
import {
  capture,
  get,
  median,
  pathOf,
  post,
  stallThenShutdown,
  tempDirs,
  tinyPng,
  waitFor,
  type Res,
  heldEntries,
} from '../support/index.js';

const SCOPES = defaultKeys()[0]!.scopes!;
const UPSTREAM_KEY = 'sk-upstream-secret-7f3a9c21d4';
const CLIENT_KEY = 'sk-client-proxy-key-5b8e2d';
const PACING = { 'x-mock-pacing': 'ttft=100; tps=20' };

/** Every file under a folder, recursively. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });

/**
 * A streamed request: the status, the body, when each event arrived (ms from the response head), and when the head
 * arrived (ms from the request's sending).
 */
function streamed(
  url: string,
  path: string,
  body: unknown,
  key: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; at: number[]; headAt: number }> {
  const payload = JSON.stringify(body);
  let sent = 0;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(path, url),
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(payload)),
          ...headers,
        },
      },
      (res) => {
        const head = performance.now();
        const at: number[] = [];
        let text = '';
        res.on('data', (c: Buffer) => {
          const now = performance.now() - head;
          const s = c.toString('utf8');
          for (let i = 0; i < (s.match(/\n\n/g) ?? []).length; i++) at.push(now);
          text += s;
        });
        res.on('end', () => resolve({ status: res.statusCode!, text, at, headAt: head - sent }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    sent = performance.now();
    req.end(payload);
  });
}

/**
 * The journal once it holds `n` entries: a relayed exchange is judged and journalled once its stream is
 * over, just after the client has had all of it.
 */
const journalled = (mock: RunningMock, n: number) =>
  waitFor(`${n} journal entries`, () => {
    const entries = heldEntries(mock.services);
    return entries.length >= n && entries;
  });

const gaps = (times: readonly number[]): number[] => times.slice(1).map((t, i) => t - times[i]!);

// The session: one request of each of the seven operations (and the downloads their links lead to).
const CHAT = { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Tell me about lighthouses' }] };
const SESSION: { id: string; path: string; body: Record<string, unknown> }[] = [
  {
    id: 'images.generate',
    path: pathOf('images.generate'),
    body: { model: 'dall-e-3', prompt: 'a lighthouse at dusk', size: '1024x1024' },
  },
  {
    id: 'images.edit',
    path: pathOf('images.edit'),
    body: { prompt: 'make the sky purple', image: tinyPng(3, 2).toString('base64') },
  },
  {
    id: 'video.generate',
    path: `/v1${pathOf('video.generate')}`,
    body: { model: 'gen3a_turbo', mode: 'text_to_video', prompt: 'waves on a beach' },
  },
  { id: 'voice.tts', path: pathOf('voice.tts'), body: { text: 'Hello world', voice_id: 'rachel' } },
  { id: 'cloud.speech', path: pathOf('cloud.speech'), body: { text: 'Hello world', voice: 'en-US-JennyNeural' } },
  {
    id: 'chat.completions',
    path: pathOf('chat.completions'),
    body: { model: 'gpt-4o-mini', temperature: 3, messages: [{ role: 'user', content: 'Hi' }] },
  },
];

const tempDir = tempDirs(test, 'uam-relay-');

test('record a session of the seven operations through the proxy, stop the upstream, replay it byte for byte', async () => {
  const cassettes = tempDir();
  const reportFile = join(tempDir(), 'violations.json');
  const upstream = await start({ port: 0, keys: [{ key: UPSTREAM_KEY, label: 'upstream', scopes: SCOPES }] });
  const log = capture();
  const proxy = await start(
    {
      port: 0,
      keys: [{ key: CLIENT_KEY, label: 'client', scopes: SCOPES }],
      proxy: upstream.url,
      upstreamKey: UPSTREAM_KEY,
      record: cassettes,
      validationProfile: 'full',
      violationsReport: reportFile,
      logLevel: 'info',
    },
    { log },
  );
  const port = proxy.port;
  const recorded = new Map<string, Res>();
  let chat: Awaited<ReturnType<typeof streamed>>;
  const media: { path: string; res: Res }[] = [];
  try {
    // The mock's keys guard the proxy: the upstream key is no key here, and no key is no call.
    assert.is((await post(proxy.url, pathOf('voice.tts'), SESSION[3]!.body, UPSTREAM_KEY)).status, 401);
    assert.is((await post(proxy.url, pathOf('voice.tts'), SESSION[3]!.body, null)).status, 401);
    assert.is(heldEntries(upstream.services).length, 0, 'refused calls never reach the upstream');

    chat = await streamed(proxy.url, pathOf('chat.completions'), CHAT, CLIENT_KEY, PACING);
    assert.is(chat.status, 200);
    assert.ok(chat.text.endsWith('data: [DONE]\n\n'));
    for (const s of SESSION) recorded.set(s.id, await post(proxy.url, s.path, s.body, CLIENT_KEY));
    for (const [id, res] of recorded)
      if (id !== 'chat.completions') assert.is(res.status, 200, `${id}: ${res.text.slice(0, 200)}`);
    // Links to the upstream's media come back as links to the proxy, which relays the download.
    const image = recorded.get('images.generate')!.json.data[0].url as string;
    const video = recorded.get('video.generate')!.json.video.url as string;
    for (const link of [image, video]) {
      assert.ok(link.startsWith(`${proxy.url}/`), `${link} points at the proxy`);
      const path = link.slice(proxy.url.length);
      const res = await get(proxy.url, path, null);
      assert.is(res.status, 200);
      media.push({ path, res });
    }
    assert.is(String(media[0]!.res.headers['content-type']), 'image/png');
    // The upstream answered every call with its own key.
    assert.ok(heldEntries(upstream.services).every((e) => e.status < 400 || e.operation === 'chat.completions'));
  } finally {
    await proxy.close();
    await upstream.close();
  }

  // One cassette per exchange; media bodies in files of their own; no key, no authorization anywhere.
  const files = filesUnder(cassettes);
  const jsons = files.filter((f) => f.endsWith('.json'));
  assert.is(jsons.length, 9, files.join('\n'));
  assert.ok(
    files.some((f) => /media\/[0-9a-f]+\.png$/.test(f)) &&
      files.some((f) => /\.mp4$/.test(f)) &&
      files.some((f) => /\.mp3$/.test(f)) &&
      files.some((f) => /\.wav$/.test(f)),
  );
  assert.not.ok(
    files.some((f) => f.endsWith('.tmp')),
    'no temporary file is left',
  );
  for (const file of [...files, reportFile, reportFile.replace(/\.json$/, '.xml')]) {
    const text = readFileSync(file).toString('latin1');
    for (const secret of [UPSTREAM_KEY, CLIENT_KEY]) assert.not.ok(text.includes(secret), `${file} holds a key`);
    assert.not.ok(/authorization/i.test(text), `${file} mentions authorization`);
  }
  for (const line of log.lines)
    for (const secret of [UPSTREAM_KEY, CLIENT_KEY])
      assert.not.ok(line.includes(secret), `a log line holds a key: ${line}`);
  const chatCassette = JSON.parse(
    readFileSync(
      jsons.find((f) => f.includes('chat.completions') && readFileSync(f, 'utf8').includes('"events"'))!,
      'utf8',
    ),
  );
  assert.is(chatCassette.request.path, '/text-provider/chat/completions');
  assert.is(chatCassette.request.headers['x-mock-pacing'], undefined, 'pacing is no part of the key');
  const recordedAt: number[] = chatCassette.response.events.map((e: { t: number }) => e.t);
  assert.ok(recordedAt.length > 3);
  const videoCassette = jsons.find((f) => f.includes('video.generate'))!;
  assert.is(
    JSON.parse(readFileSync(videoCassette, 'utf8')).request.path,
    '/video-provider/generate',
    'the /v1 prefix is no part of the key',
  );

  // Replay on the proxy's port: the upstream is gone, the answers are the same bytes.
  const replay = await start({ port, keys: [{ key: CLIENT_KEY, label: 'client', scopes: SCOPES }], replay: cassettes });
  try {
    for (const s of SESSION) {
      const res = await post(replay.url, s.path, s.body, CLIENT_KEY);
      const was = recorded.get(s.id)!;
      assert.is(res.status, was.status, s.id);
      assert.ok(res.bytes.equals(was.bytes), `${s.id}: the replayed body is the recorded one`);
      assert.is(res.headers['content-type'], was.headers['content-type']);
    }
    for (const m of media) {
      const res = await get(replay.url, m.path, null);
      assert.is(res.status, 200);
      assert.ok(res.bytes.equals(m.res.bytes), `${m.path}: the same media bytes`);
    }
    // The stream: the same bytes, paced with the recorded gaps (within 20%).
    const again = await streamed(replay.url, pathOf('chat.completions'), CHAT, CLIENT_KEY);
    assert.is(again.status, 200);
    assert.is(again.text, chat!.text);
    assert.is(again.at.length, recordedAt.length);
    const ratio = (again.at.at(-1)! - again.at[0]!) / (recordedAt.at(-1)! - recordedAt[0]!);
    assert.ok(
      ratio > 0.8 && ratio < 1.2,
      `the replayed stream's span is the recorded one's (ratio ${ratio.toFixed(2)})`,
    );
    const gapRatios = gaps(again.at)
      .map((g, i) => [g, gaps(recordedAt)[i]!] as const)
      .filter(([, r]) => r >= 20)
      .map(([g, r]) => g / r);
    assert.ok(gapRatios.length > 2);
    const m = median(gapRatios);
    assert.ok(m > 0.8 && m < 1.2, `the replayed gaps are the recorded ones (median ratio ${m.toFixed(2)})`);
    // The replay waits the recorded time to the first event from the request's arrival (a model's time to first token
    // runs while the request is read and answered), so it is a lower bound from the client's sending, however loaded
    // the machine; from the head alone it is not (a replay slow to answer sends its head later into the same wait).
    // The pacer may run a job up to a millisecond early.
    assert.ok(
      again.headAt + again.at[0]! >= recordedAt[0]! - 1,
      `the time to the first event is kept (${(again.headAt + again.at[0]!).toFixed(1)} vs ${recordedAt[0]})`,
    );

    // Faults still apply on top of a replay.
    const faulted = await post(replay.url, SESSION[3]!.path, SESSION[3]!.body, CLIENT_KEY, {
      'x-mock-fault': 'status=503',
    });
    assert.is(faulted.status, 503);
    // A request with no cassette: a 404 naming its hash and how to record it.
    const other = { ...SESSION[3]!.body, text: 'never recorded' };
    const miss = await post(replay.url, SESSION[3]!.path, other, CLIENT_KEY);
    assert.is(miss.status, 404);
    assert.is(miss.json.error.code, 'cassette_not_found');
    const hash = requestHash(normaliseRequest(operation('voice.tts'), 'POST', SESSION[3]!.path, {}, other));
    assert.ok(
      miss.json.error.message.includes(hash) && miss.json.error.message.includes('--record'),
      miss.json.error.message,
    );
    assert.is(miss.headers['x-mock-cassette'], hash);
    // A media file no client downloaded while recording: the 404 says so, not "record it against a real upstream".
    const undownloaded = await get(replay.url, '/media/images/1024x1024/never-downloaded.png', CLIENT_KEY);
    assert.is(undownloaded.status, 404);
    assert.is(undownloaded.json.error.code, 'cassette_not_found');
    assert.match(undownloaded.json.error.message, /no client downloaded the file through the proxy while recording/);
    assert.match(undownloaded.json.error.message, /--replay-fallback mock/);
    assert.not.match(undownloaded.json.error.message, /against a real upstream/);
    // The mock's keys still guard the replay.
    assert.is((await post(replay.url, SESSION[3]!.path, SESSION[3]!.body, UPSTREAM_KEY)).status, 401);
  } finally {
    await replay.close();
  }

  // With --replay-fallback mock, a miss gets the mock's own answer.
  const fallback = await startMockServer({
    keys: [{ key: CLIENT_KEY, scopes: SCOPES }],
    replay: cassettes,
    replayFallback: 'mock',
  });
  try {
    const res = await post(fallback.url, SESSION[3]!.path, { ...SESSION[3]!.body, text: 'never recorded' }, CLIENT_KEY);
    assert.is(res.status, 200);
    assert.is(fallback.relayStats()?.misses, 1);
  } finally {
    await fallback.close();
  }
});

test('replay with --replay-tps paces events at that rate instead of the recorded gaps', async () => {
  const cassettes = tempDir();
  const upstream = await start({ port: 0, keys: [{ key: UPSTREAM_KEY, scopes: SCOPES }] });
  const proxy = await startMockServer({
    keys: [{ key: CLIENT_KEY, scopes: SCOPES }],
    proxy: upstream.url,
    upstreamKey: UPSTREAM_KEY,
    record: cassettes,
  });
  try {
    assert.is(
      (await streamed(proxy.url, pathOf('chat.completions'), CHAT, CLIENT_KEY, { 'x-mock-pacing': 'ttft=0; tps=1000' }))
        .status,
      200,
    );
  } finally {
    await proxy.close();
    await upstream.close();
  }
  const replay = await startMockServer({
    keys: [{ key: CLIENT_KEY, scopes: SCOPES }],
    replay: cassettes,
    replayTps: 25,
  });
  try {
    const res = await streamed(replay.url, pathOf('chat.completions'), CHAT, CLIENT_KEY);
    const m = median(gaps(res.at).slice(0, -1));
    assert.ok(m > 30 && m < 55, `about 40 ms between events at 25 per second (median ${m.toFixed(1)})`);
  } finally {
    await replay.close();
  }
});

/** An upstream that departs from the API: it answers every call with 200 and a valid chat completion. */
async function lenientUpstream(): Promise<{ url: string; server: Server }> {
  const completion = {
    id: 'chatcmpl-lenient',
    object: 'chat.completion',
    created: 1767225600,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_lenient' });
      res.end(JSON.stringify(completion));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

test('a planted departure upstream (200 for temperature 3) is a violation in the header, the journal and the report', async () => {
  const lenient = await lenientUpstream();
  const reportFile = join(tempDir(), 'out', 'violations.xml');
  let proxy: RunningMock | undefined;
  const log = capture();
  try {
    proxy = await start(
      {
        port: 0,
        keys: [{ key: CLIENT_KEY, scopes: SCOPES }],
        proxy: lenient.url,
        upstreamKey: UPSTREAM_KEY,
        violationsReport: reportFile,
        logLevel: 'info',
      },
      { log },
    );
    const bad = await post(
      proxy.url,
      pathOf('chat.completions'),
      { model: 'gpt-4o-mini', temperature: 3, messages: [{ role: 'user', content: 'Hi' }] },
      CLIENT_KEY,
    );
    assert.is(bad.status, 200, 'the upstream answer is relayed as it is');
    assert.is(bad.headers['x-mock-violations'], '2; response.status');
    const good = await post(
      proxy.url,
      pathOf('chat.completions'),
      { model: 'gpt-4o-mini', temperature: 1, messages: [{ role: 'user', content: 'Hi' }] },
      CLIENT_KEY,
    );
    assert.is(good.status, 200);
    assert.is(good.headers['x-mock-violations'], undefined, 'a correct exchange has no violation');
    const entries = heldEntries(proxy.services);
    const judged = entries.find((e) => e.violations)!;
    assert.equal(
      judged.violations!.map((v) => v.rule),
      ['response.status', 'request.schema'],
    );
    assert.match(judged.violations![0]!.expected, /status 400/);
    assert.match(judged.violations![1]!.actual, /temperature/);
    assert.is(entries.filter((e) => e.violations).length, 1);
  } finally {
    await proxy?.close();
    lenient.server.close();
  }
  const junit = readFileSync(reportFile, 'utf8');
  assert.match(junit, /<testsuite name="chat.completions" tests="1" failures="1"/);
  assert.match(junit, /type="response.status"/);
  const json = JSON.parse(readFileSync(reportFile.replace(/\.xml$/, '.json'), 'utf8'));
  assert.is(json.summary.total, 2);
  assert.is(json.summary.failed, 1);
  assert.is(json.cases[0].failures[0].check, 'response.status');
  for (const text of [junit, JSON.stringify(json), ...log.lines])
    for (const secret of [UPSTREAM_KEY, CLIENT_KEY])
      assert.not.ok(text.includes(secret), 'a key in a report or log line');
});

/** A streamed chat completion that may end early: its status, its events' data, and whether it ended cleanly. */
function faulted(
  url: string,
  key: string,
  fault?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; data: string[]; complete: boolean }> {
  const payload = JSON.stringify(CHAT);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(pathOf('chat.completions'), url),
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          ...(fault ? { 'x-mock-fault': fault } : {}),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('error', () => undefined); // a cut stream ends in 'aborted': what it brought is the answer
        res.on('close', () =>
          resolve({
            status: res.statusCode!,
            data: [...text.matchAll(/^data: (.*)$/gm)].map((m) => m[1]!),
            complete: res.complete,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

test('stream faults apply to a relayed stream as to the mock own: cut, stalled and broken, judged and recorded once', async () => {
  const upstream = await start({
    port: 0,
    keys: [{ key: UPSTREAM_KEY, scopes: SCOPES }],
    timeouts: { stallMaxMs: 200 },
  });
  const cassettes = tempDir();
  const proxy = await start({
    port: 0,
    keys: [{ key: CLIENT_KEY, scopes: SCOPES }],
    proxy: upstream.url,
    upstreamKey: UPSTREAM_KEY,
    record: cassettes,
    validationProfile: 'full',
    timeouts: { stallMaxMs: 200 },
  });
  try {
    const plain = await faulted(proxy.url, CLIENT_KEY);
    assert.ok(plain.complete && plain.data.length > 6 && plain.data.at(-1) === '[DONE]', 'the stream relayed whole');
    for (const fault of [
      'stream-cut=3',
      'stall=2',
      'malformed',
      'malformed;stream-cut=1',
      'stream-cut=0',
      'stream-cut=500',
      'stall=500',
    ]) {
      // The same fault on the upstream mock's own answer is what the relayed stream must look like.
      const own = await faulted(upstream.url, UPSTREAM_KEY, fault);
      const relayed = await faulted(proxy.url, CLIENT_KEY, fault);
      assert.is(relayed.status, 200, fault);
      assert.equal(relayed.data, own.data, fault);
      assert.is(relayed.complete, own.complete, fault);
    }
    // Paced, the upstream's events come one read at a time: the cut comes before its stream's end,
    // which is then not read, nor judged as the upstream's (it is no departure of the upstream's).
    const cut = await faulted(proxy.url, CLIENT_KEY, 'stream-cut=3', { 'x-mock-pacing': 'ttft=0; tps=40' });
    assert.is(cut.data.length, 3);
    assert.not.ok(cut.complete);
    const broken = await faulted(proxy.url, CLIENT_KEY, 'malformed');
    assert.throws(() => JSON.parse(broken.data[1]!));
    assert.is(broken.data.at(-1), '[DONE]');
    // The journal says how each relayed stream ended.
    const ends = heldEntries(proxy.services).map((e) => `${e.fault ?? '-'} ${e.stream}`);
    assert.ok(ends.includes('stream-cut=3 [header] cut'), ends.join(', '));
    assert.ok(ends.includes('stall=2 [header] stalled'), ends.join(', '));
    assert.ok(ends.includes('malformed [header] completed'), ends.join(', '));
    // Every exchange is judged once, and none of the client's faults is the upstream's departure.
    const stats = proxy.relay!.stats();
    assert.is(stats.exchanges, 10);
    assert.is(heldEntries(proxy.services).filter((e) => e.violations).length, 0);
    assert.is(stats.withViolations, 0);
  } finally {
    await proxy.close();
    await upstream.close();
  }
  // What the upstream answered is recorded whole (one cassette: the same request each time), with its [DONE].
  const files = filesUnder(cassettes);
  assert.is(files.length, 1);
  const cassette = JSON.parse(readFileSync(files[0]!, 'utf8'));
  assert.is(cassette.response.events.at(-1).data, '[DONE]');
});

test('shutdown: a relayed stream held by a stall fault ends cleanly at once, as the mock own does', async () => {
  const upstream = await start({ port: 0, keys: [{ key: UPSTREAM_KEY, scopes: SCOPES }] });
  // Without the shutdown's word, the stall would hold until stallMaxMs, then drop the connection.
  const proxy = await start({
    port: 0,
    keys: [{ key: CLIENT_KEY, scopes: SCOPES }],
    proxy: upstream.url,
    upstreamKey: UPSTREAM_KEY,
    timeouts: { stallMaxMs: 5_000 },
  });
  try {
    const ending = await stallThenShutdown(proxy, pathOf('chat.completions'), CLIENT_KEY, CHAT);
    assert.is(ending.how, 'end');
    assert.is(ending.text.split('\n\n').filter(Boolean).length, 2);
    assert.not.match(ending.text, /\[DONE\]/);
    assert.equal(
      heldEntries(proxy.services).map((e) => e.stream),
      ['stalled'],
    );
  } finally {
    await proxy.close();
    await upstream.close();
  }
});

test('a relayed stream fault counts events, not blocks: a comment goes through, and a lone event is the one broken', () => {
  const blocks = [': keep-alive\n\n', 'data: {"n":1}\n\n', 'event: note\ndata: {"n":2}\n\n', 'data: [DONE]\n\n'];
  const through = (fault: Parameters<typeof RelayedStreamFault.of>[0]) => {
    const f = RelayedStreamFault.of(fault)!;
    return blocks.map((b) => f.take(b)).join('') + f.end();
  };
  assert.is(RelayedStreamFault.of({ status: 503 }), undefined);
  assert.is(through({ streamCut: 1 }), ': keep-alive\n\ndata: {"n":1}\n\n');
  assert.is(through({ stall: 5 }), ': keep-alive\n\ndata: {"n":1}\n\nevent: note\ndata: {"n":2}\n\n');
  assert.is(through({ streamCut: 0 }), '');
  assert.match(
    through({ malformed: true }),
    /^: keep-alive\n\ndata: \{"n":1\}\n\ndata: \{"id":"chatcmpl-broken"[^\n]*\n\ndata: \[DONE\]\n\n$/,
  );
  // A stream of one event: that event is the one broken, before [DONE] or at the end of what came.
  const lone = RelayedStreamFault.of({ malformed: true })!;
  assert.match(
    lone.take('data: {"n":1}\n\n') + lone.take('data: [DONE]\n\n'),
    /^data: \{"id":"chatcmpl-broken"[^\n]*\n\ndata: \[DONE\]\n\n$/,
  );
  const cutShort = RelayedStreamFault.of({ malformed: true })!;
  assert.match(cutShort.take('data: {"n":1}\n\n') + cutShort.end(), /^data: \{"id":"chatcmpl-broken"[^\n]*\n\n$/);
});

test('a client that leaves a relayed stream is no departure of the upstream', async () => {
  const upstream = await start({ port: 0, keys: [{ key: UPSTREAM_KEY, scopes: SCOPES }] });
  const proxy = await start({
    port: 0,
    keys: [{ key: CLIENT_KEY, scopes: SCOPES }],
    proxy: upstream.url,
    upstreamKey: UPSTREAM_KEY,
    validationProfile: 'full',
  });
  try {
    const req = httpRequest(
      new URL(pathOf('chat.completions'), proxy.url),
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${CLIENT_KEY}`,
          'content-type': 'application/json',
          'x-mock-pacing': 'ttft=0; tps=40',
        },
      },
      (res) => {
        res.once('data', () => req.destroy());
        res.on('error', () => undefined);
      },
    );
    req.on('error', () => undefined);
    let closed = false;
    req.once('close', () => (closed = true));
    req.end(JSON.stringify(CHAT), () => undefined);
    await waitFor('the stream to end', () => closed, { on: [req, 'close'] });
    const [entry] = await journalled(proxy, 1);
    assert.is(entry?.stream, 'aborted');
    assert.is(entry?.violations, undefined);
    assert.is(proxy.relay!.stats().withViolations, 0);
  } finally {
    await proxy.close();
    await upstream.close();
  }
});

/**
 * A gateway that buffers event streams: it asks the mock (paced as a model is, 20 tokens a second) and
 * sends the answer on only once it is whole, head and body in one write.
 */
async function bufferingUpstream(mockUrl: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const answer = await fetch(mockUrl + req.url!, {
        method: req.method,
        headers: {
          authorization: req.headers.authorization!,
          'content-type': 'application/json',
          'x-mock-pacing': 'ttft=0; tps=20',
        },
        body: Buffer.concat(chunks),
      });
      const body = Buffer.from(await answer.arrayBuffer());
      res.writeHead(answer.status, {
        'content-type': answer.headers.get('content-type')!,
        'x-request-id': answer.headers.get('x-request-id')!,
        'content-length': body.length,
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

test('delivery: a fast upstream whose short streams arrive whole is no departure; one that holds back a paced stream is', async () => {
  const upstream = await start({ port: 0, keys: [{ key: UPSTREAM_KEY, scopes: SCOPES }] });
  const buffering = await bufferingUpstream(upstream.url);
  const direct = await start({
    port: 0,
    keys: [{ key: CLIENT_KEY, scopes: SCOPES }],
    proxy: upstream.url,
    upstreamKey: UPSTREAM_KEY,
    validationProfile: 'full',
  });
  const held = await start({
    port: 0,
    keys: [{ key: CLIENT_KEY, scopes: SCOPES }],
    proxy: buffering.url,
    upstreamKey: UPSTREAM_KEY,
    validationProfile: 'full',
  });
  try {
    // The mock unpaced, as `npm start` runs it: a short stream often comes in the proxy's one read.
    for (let i = 0; i < 8; i++) {
      const r = await streamed(
        direct.url,
        pathOf('chat.completions'),
        { ...CHAT, messages: [{ role: 'user', content: 'Hi' }] },
        CLIENT_KEY,
      );
      assert.is(r.status, 200);
    }
    assert.equal(
      (await journalled(direct, 8)).map((e) => e.violations),
      Array(8).fill(undefined),
    );
    const r = await streamed(held.url, pathOf('chat.completions'), CHAT, CLIENT_KEY);
    assert.is(r.status, 200);
    assert.ok(r.text.endsWith('data: [DONE]\n\n'), 'the held stream is relayed whole');
    const [entry] = await journalled(held, 1);
    assert.equal(
      entry?.violations?.map((v) => v.rule),
      ['response.sse'],
    );
    assert.match(entry!.violations![0]!.actual, /the whole stream arrived in one read, \d+ ms after the request/);
  } finally {
    await held.close();
    await direct.close();
    buffering.server.close();
    await upstream.close();
  }
});

// Bodies the request schema accepts that the mock refuses by a rule beyond it (the document's own limit
// of n for dall-e-3, the catalogue, an image it cannot read): a correct upstream refuses them too.
const REFUSED_BEYOND_SCHEMA: { path: string; body: unknown }[] = [
  { path: pathOf('images.generate'), body: { model: 'dall-e-3', prompt: 'a lighthouse', n: 2 } },
  {
    path: pathOf('chat.completions'),
    body: { model: 'gpt-4o-mini', max_tokens: 10_000_000, messages: [{ role: 'user', content: 'Hi' }] },
  },
  { path: pathOf('chat.completions'), body: { model: 'no-such-model', messages: [{ role: 'user', content: 'Hi' }] } },
  { path: pathOf('voice.tts'), body: { text: 'Hello', voice_id: 'nosuchvoice' } },
  {
    path: pathOf('images.edit'),
    body: { prompt: 'purple', image: Buffer.from('not an image at all').toString('base64') },
  },
];

test('a 400 for a rule beyond the schema that the mock applies too is no departure of the upstream; a 400 for a body the mock answers is', async () => {
  const upstream = await start({ port: 0, keys: [{ key: UPSTREAM_KEY, scopes: SCOPES }] });
  // A gateway that refuses every call with a well-formed 400.
  const refusing = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: 'Invalid request.', type: 'invalid_request_error', param: null, code: null },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  const refusingUrl = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
  const proxyTo = (url: string) =>
    start({
      port: 0,
      keys: [{ key: CLIENT_KEY, scopes: SCOPES }],
      proxy: url,
      upstreamKey: UPSTREAM_KEY,
      validationProfile: 'full',
    });
  const correct = await proxyTo(upstream.url);
  const wrong = await proxyTo(refusingUrl);
  try {
    for (const { path, body } of REFUSED_BEYOND_SCHEMA) {
      const res = await post(correct.url, path, body, CLIENT_KEY);
      assert.is(res.status, 400, path);
      assert.is(res.headers['x-mock-violations'], undefined, `${path} ${JSON.stringify(body)}`);
      // The same refusal from a gateway whose error names no field: still no departure of the status.
      const elsewhere = await post(wrong.url, path, body, CLIENT_KEY);
      assert.is(elsewhere.status, 400);
      assert.not.match(String(elsewhere.headers['x-mock-violations'] ?? ''), /response\.status/, path);
    }
    assert.is(correct.relay!.stats().withViolations, 0);
    // A body the schema refuses, refused by the upstream as it should (400 expected, 400 got): the client's mistake,
    // a warning of the report, never a failure.
    const invalid = await post(
      correct.url,
      pathOf('chat.completions'),
      { model: 'gpt-4o-mini', temperature: 3, messages: [{ role: 'user', content: 'Hi' }] },
      CLIENT_KEY,
    );
    assert.is(invalid.status, 400);
    assert.is(invalid.headers['x-mock-violations'], '1; request.schema');
    const report = correct.relay!.violations()!;
    assert.equal([report.summary.failed, report.summary.warnings], [0, 1]);
    assert.equal(
      report.results.map((r) => [r.verdict, r.failures.map((f) => f.check)]),
      [['warn', ['request.schema']]],
    );
    // A body the mock answers, refused: that is the upstream's departure.
    const valid = await post(
      wrong.url,
      pathOf('chat.completions'),
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] },
      CLIENT_KEY,
    );
    assert.is(valid.status, 400);
    assert.match(String(valid.headers['x-mock-violations']), /^1; response\.status$/);
  } finally {
    await correct.close();
    await wrong.close();
    await upstream.close();
    refusing.close();
  }
});

test('a cassette that cannot be written is logged and counted, and the answer still goes out', async () => {
  const upstream = await start({ port: 0, keys: [{ key: UPSTREAM_KEY, scopes: SCOPES }] });
  const blocker = join(tempDir(), 'a-file');
  writeFileSync(blocker, 'not a folder');
  const log = capture();
  const proxy = await start(
    {
      port: 0,
      keys: [{ key: CLIENT_KEY, scopes: SCOPES }],
      proxy: upstream.url,
      upstreamKey: UPSTREAM_KEY,
      record: join(blocker, 'cassettes'),
      logLevel: 'info',
    },
    { log },
  );
  try {
    assert.is((await post(proxy.url, pathOf('voice.tts'), SESSION[3]!.body, CLIENT_KEY)).status, 200);
  } finally {
    await proxy.close();
    await upstream.close();
  }
  assert.is(proxy.relay!.stats().recordFailures, 1);
  assert.is(proxy.relay!.stats().recorded, 0);
  assert.ok(
    log.lines.some((l) => l.includes('could not write the cassette of voice.tts')),
    log.lines.join('\n'),
  );
});

test('settings that exclude each other are refused at start-up', async () => {
  for (const [config, pattern] of [
    [{ proxy: 'http://127.0.0.1:9', replay: 'x' }, /exclude each other/],
    [{ record: 'x' }, /record needs proxy/],
  ] as const) {
    try {
      await startMockServer(config);
      assert.unreachable('started');
    } catch (err) {
      assert.match((err as Error).message, pattern);
    }
  }
});

test('the upstream key comes from the environment when not given, and never from a config file', async () => {
  const upstream = await start({ port: 0, keys: [{ key: UPSTREAM_KEY, scopes: SCOPES }] });
  const saved = process.env.UPSTREAM_API_KEY;
  process.env.UPSTREAM_API_KEY = UPSTREAM_KEY;
  try {
    const proxy = await startMockServer({ keys: [{ key: CLIENT_KEY, scopes: SCOPES }], proxy: upstream.url });
    try {
      assert.is((await post(proxy.url, pathOf('voice.tts'), SESSION[3]!.body, CLIENT_KEY)).status, 200);
    } finally {
      await proxy.close();
    }
  } finally {
    if (saved === undefined) delete process.env.UPSTREAM_API_KEY;
    else process.env.UPSTREAM_API_KEY = saved;
    await upstream.close();
  }
  const file = join(tempDir(), 'config.json');
  writeFileSync(file, JSON.stringify({ proxy: 'http://127.0.0.1:9', upstreamKey: UPSTREAM_KEY }));
  assert.throws(() => serveConfig(['--config', file]), /upstreamKey in .*: not allowed in a file/);
  assert.equal(serveConfig(['--proxy', 'http://127.0.0.1:9', '--upstream-key', 'k', '--replay-tps', '30']), {
    proxy: 'http://127.0.0.1:9',
    upstreamKey: 'k',
    replayTps: 30,
  });
});

test.run();
