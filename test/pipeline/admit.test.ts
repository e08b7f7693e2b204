import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MockApp } from '../../src/app/createApp.js';
import { operations } from '../../src/contract/operations.js';
import type { RequestRecord } from '../../src/domain/journal/journal.js';
import type { Dist, LatencyControl, LatencyView, Profile } from '../../src/domain/latency/types.js';
import type { Slot } from '../../src/domain/latency/slots.js';
import {
  KEY,
  VALID,
  get,
  pathOf,
  post,
  request,
  virtualTimers,
  waitFor,
  withApp,
  type VirtualTimers,
} from '../support/index.js';

const CHAT = pathOf('chat.completions');
const MODEL = VALID['chat.completions']!.model as string;

/** A latency control of the test's own: one profile for every model (none with `profile=off`), and scripted draws. */
function scripted(profile: Profile, opts: { drawn?: number[]; queueFullStatus?: 429 | 503 } = {}) {
  const asked: Dist[] = [];
  const chosen: { model: string; header: string | undefined }[] = [];
  const drawn = [...(opts.drawn ?? [])];
  const view = {
    profile: 'test',
    seed: 0,
    draws: 0,
    queueFullStatus: opts.queueFullStatus ?? 429,
    retryAfterMs: 1500,
    profiles: {},
    models: [],
  } satisfies LatencyView;
  const control: LatencyControl = {
    choose: (model, header) => {
      chosen.push({ model, header });
      return header === 'off' ? undefined : { name: 'test', profile, from: 'config' };
    },
    // A scripted draw when there is one left, else the distribution's fixed value.
    draws: () => ({ draw: (d) => (asked.push(d), drawn.length ? drawn.shift()! : typeof d === 'number' ? d : 0) }),
    view: () => view,
    update: () => view,
    reset: () => view,
  };
  return { control, asked, chosen, drawn };
}

/** The server's waits, held until the test lets each go (or the client leaves). */
function heldSleeps(app: MockApp) {
  const sleeps: { ms: number; go: () => void }[] = [];
  app.services.clock.sleep = (ms, signal) =>
    new Promise<void>((resolve) => {
      sleeps.push({ ms, go: resolve });
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  return sleeps;
}

const use = (app: MockApp, control: LatencyControl) =>
  void ((app.services as { latency: LatencyControl }).latency = control);

/** Runs fn against an app with stream timers on a virtual clock and the records it makes. */
function withAdmission(
  fn: (url: string, app: MockApp, records: RequestRecord[], timers: VirtualTimers) => Promise<void>,
): Promise<void> {
  const records: RequestRecord[] = [];
  const timers = virtualTimers();
  return withApp({}, { streamTimers: timers, observers: [(r) => void records.push(r)] }, (url, app) =>
    fn(url, app, records, timers),
  );
}

const chat = (url: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  post(url, CHAT, { ...VALID['chat.completions'], ...extra }, KEY, headers);

test('a cap: maxRunning run, maxWaiting wait, the next is refused 429 with retry-after; the waiter runs when a slot frees', async () => {
  await withAdmission(async (url, app, records) => {
    const { control } = scripted({ ttft: 100, maxRunning: 2, maxWaiting: 1 });
    use(app, control);
    const sleeps = heldSleeps(app);
    const load = app.services.load;
    const r1 = chat(url);
    const r2 = chat(url);
    await waitFor('two running', () => sleeps.length === 2);
    const r3 = chat(url);
    await waitFor('one waiting', () => load.waiting(MODEL) === 1);
    const refused = await chat(url);
    assert.is(refused.status, 429);
    assert.is(refused.headers['retry-after'], '2');
    assert.is(refused.headers['retry-after-ms'], '1500');
    assert.is(refused.json.error.code, 'model_overloaded');
    assert.is(refused.json.error.type, 'requests');
    assert.is(
      refused.json.error.message,
      `The model '${MODEL}' is at capacity (2 running, 1 waiting); retry after 2 s.`,
    );
    assert.is(sleeps.length, 2, 'the waiter has not started');
    sleeps[0]!.go();
    assert.is((await r1).status, 200);
    await waitFor('the waiter runs', () => sleeps.length === 3);
    assert.is(load.waiting(MODEL), 0);
    assert.is(load.running(MODEL), 2);
    sleeps[1]!.go();
    sleeps[2]!.go();
    assert.is((await r2).status, 200);
    assert.is((await r3).status, 200);
    await waitFor('all recorded', () => records.length === 4);
    assert.is(load.running(MODEL), 0, 'every slot given back');
    assert.ok(records.every((r) => r.profile === 'test'));
    // Every admitted request says how long it queued (the refused one never queued).
    assert.equal(records.map((r) => `${r.status} ${typeof r.queuedMs}`).sort(), [
      '200 number',
      '200 number',
      '200 number',
      '429 undefined',
    ]);
  });
});

test("a header's profile times its request and never lifts the model's cap: the model's own profile holds its lane", async () => {
  const records: RequestRecord[] = [];
  const config = {
    latency: {
      profile: 'off',
      profiles: { capped: { ttft: 100, maxRunning: 2, maxWaiting: 10 }, tight: { ttft: 7, maxRunning: 1 } },
      models: { [MODEL]: 'capped' },
    },
  };
  await withApp(config, { observers: [(r) => void records.push(r)] }, async (url, app) => {
    const sleeps = heldSleeps(app);
    const load = app.services.load;
    // Profiles with caps of 64, 32, 16 and 1: none is the model's, none applies.
    const asked = ['small-fast', 'medium', 'large-slow', 'tight', 'catalogue'];
    const all = asked.map((p) => chat(url, {}, { 'x-mock-pacing': `profile=${p}` }));
    await waitFor('two running, three waiting', () => sleeps.length === 2 && load.waiting(MODEL) === 3);
    for (let i = 0; i < asked.length; i++) {
      await waitFor(`request ${i} runs`, () => sleeps.length > i);
      assert.ok(load.running(MODEL) <= 2, `${load.running(MODEL)} running`);
      sleeps[i]!.go();
    }
    for (const res of await Promise.all(all)) assert.is(res.status, 200);
    await waitFor('all recorded', () => records.length === asked.length);
    // Each was timed by the profile it asked for (the journal names it), under the model's cap.
    assert.equal(records.map((r) => r.profile).sort(), ['large-slow', 'medium', 'small-fast', 'small-fast', 'tight']);
    assert.ok(
      sleeps.some((s) => s.ms === 7),
      "the tight profile's ttft timed its request",
    );
    assert.equal([load.running(MODEL), load.waiting(MODEL)], [0, 0]);
  });
});

test('profile=off on a capped model: answered at once once it has a slot, but it waits for one as any request does', async () => {
  const records: RequestRecord[] = [];
  const config = {
    latency: {
      profile: 'off',
      profiles: { one: { ttft: 5, maxRunning: 1, maxWaiting: 5 } },
      models: { [MODEL]: 'one' },
    },
  };
  await withApp(config, { observers: [(r) => void records.push(r)] }, async (url, app) => {
    const sleeps = heldSleeps(app);
    const load = app.services.load;
    const timed = chat(url);
    await waitFor('the first holds the only slot', () => sleeps.length === 1);
    const untimed = chat(url, {}, { 'x-mock-pacing': 'profile=off' });
    await waitFor('profile=off waits for the slot', () => load.waiting(MODEL) === 1);
    sleeps[0]!.go();
    assert.is((await timed).status, 200);
    assert.is((await untimed).status, 200);
    assert.is(sleeps.length, 1, 'profile=off was not timed');
    await waitFor('both recorded', () => records.length === 2);
    assert.equal(
      records.map((r) => [r.profile, typeof r.queuedMs]),
      [
        ['one', 'number'],
        [undefined, 'number'],
      ],
    );
    assert.equal([load.running(MODEL), load.waiting(MODEL)], [0, 0]);
  });
});

test("a header's profile on a model without one: the request is timed and counted, and runs at once (no cap)", async () => {
  await withApp({ latency: { profile: 'off' } }, {}, async (url, app) => {
    const sleeps = heldSleeps(app);
    const load = app.services.load;
    const all = Array.from({ length: 3 }, () => chat(url, {}, { 'x-mock-pacing': 'profile=tight' }));
    for (const res of await Promise.all(all)) assert.is(res.status, 400, 'tight is no profile of this server');
    const slow = Array.from({ length: 3 }, () => chat(url, {}, { 'x-mock-pacing': 'profile=large-slow' }));
    await waitFor('all three run at once', () => sleeps.length === 3 && load.running(MODEL) === 3);
    assert.is(load.waiting(MODEL), 0);
    for (const s of sleeps) s.go();
    for (const res of await Promise.all(slow)) assert.is(res.status, 200);
    assert.is(load.running(MODEL), 0);
  });
});

test("the admin API taking a model's cap away lets its waiters in at once; putting it back holds the next ones", async () => {
  const config = {
    latency: {
      profile: 'off',
      profiles: { one: { ttft: 5, maxRunning: 1, maxWaiting: 5 } },
      models: { [MODEL]: 'one' },
    },
  };
  await withApp(config, {}, async (url, app) => {
    const sleeps = heldSleeps(app);
    const load = app.services.load;
    const all = Array.from({ length: 3 }, () => chat(url));
    await waitFor('one running, two waiting', () => sleeps.length === 1 && load.waiting(MODEL) === 2);
    const put = await request(url, '/__admin/latency', {
      method: 'PUT',
      body: { models: { [MODEL]: 'off' } },
      key: null,
    });
    assert.is(put.status, 200, put.text);
    await waitFor('the waiters run', () => sleeps.length === 3 && load.waiting(MODEL) === 0);
    assert.is((await request(url, '/__admin/latency', { method: 'DELETE', key: null })).status, 200);
    for (const s of sleeps) s.go();
    for (const res of await Promise.all(all)) assert.is(res.status, 200);
    assert.is(load.running(MODEL), 0);
  });
});

test('the operations a latency profile times are those that read X-Mock-Pacing (their rows list it), and only they', () => {
  for (const op of operations)
    assert.is(op.headers?.includes('X-Mock-Pacing') === true, op.latency !== undefined, op.id);
});

test('queueFullStatus 503: a full queue answers 503, with the same headers', async () => {
  await withAdmission(async (url, app) => {
    use(app, scripted({ maxRunning: 1 }, { queueFullStatus: 503 }).control);
    const sleeps = heldSleeps(app);
    app.services.load.acquire(MODEL); // the only slot is taken
    const refused = await chat(url);
    assert.is(refused.status, 503);
    assert.is(refused.json.error.code, 'model_overloaded');
    assert.is(refused.headers['retry-after'], '2');
    assert.is(sleeps.length, 0);
  });
});

test('the queue is served first come, first served', async () => {
  await withAdmission(async (url, app) => {
    use(app, scripted({ ttft: 10, maxRunning: 1, maxWaiting: 3 }).control);
    const sleeps = heldSleeps(app);
    const done: string[] = [];
    const send = (name: string) =>
      chat(url, { messages: [{ role: 'user', content: name }] }).then((r) => {
        assert.is(r.status, 200);
        done.push(name);
      });
    const all = [send('a')];
    await waitFor('a runs', () => sleeps.length === 1);
    for (const [i, name] of ['b', 'c', 'd'].entries()) {
      all.push(send(name));
      await waitFor(`${name} waits`, () => app.services.load.waiting(MODEL) === i + 1);
    }
    for (let i = 0; i < 4; i++) {
      await waitFor(`request ${i} runs`, () => sleeps.length === i + 1);
      sleeps[i]!.go();
    }
    await Promise.all(all);
    assert.equal(done, ['a', 'b', 'c', 'd']);
  });
});

/** Sends a chat request and hangs up once the server has it waiting (`gone` decides when). */
function leaving(url: string, gone: () => Promise<unknown>, extra: Record<string, unknown> = {}): Promise<void> {
  const body = JSON.stringify({ ...VALID['chat.completions'], ...extra });
  const req = httpRequest(new URL(CHAT, url), {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
  });
  req.on('error', () => {});
  req.end(body);
  return gone().then(() => void req.destroy());
}

test('a waiter whose client leaves gives up its place; no slot or waiter is left behind', async () => {
  await withAdmission(async (url, app, records) => {
    use(app, scripted({ ttft: 10, maxRunning: 1, maxWaiting: 1 }).control);
    const sleeps = heldSleeps(app);
    const load = app.services.load;
    const first = chat(url);
    await waitFor('the first runs', () => sleeps.length === 1);
    await leaving(url, () => waitFor('the second waits', () => load.waiting(MODEL) === 1));
    await waitFor('its place is given up', () => load.waiting(MODEL) === 0);
    await waitFor('it is recorded', () => records.length === 1);
    assert.is(records[0]!.status, 0);
    assert.is(records[0]!.stream, 'aborted');
    // There is room in the queue again.
    const third = chat(url);
    await waitFor('the third waits', () => load.waiting(MODEL) === 1);
    sleeps[0]!.go();
    await waitFor('the third runs', () => sleeps.length === 2);
    sleeps[1]!.go();
    assert.is((await first).status, 200);
    assert.is((await third).status, 200);
    await waitFor('all recorded', () => records.length === 3);
    assert.is(load.running(MODEL), 0);
  });
});

test('a client that leaves during the wait for its answer gives its slot back', async () => {
  await withAdmission(async (url, app, records) => {
    use(app, scripted({ ttft: 5000, maxRunning: 1, maxWaiting: 0 }).control);
    const sleeps = heldSleeps(app);
    await leaving(url, () => waitFor('it waits its time', () => sleeps.length === 1));
    await waitFor('it is recorded', () => records.length === 1);
    assert.is(records[0]!.status, 0);
    assert.is(app.services.load.running(MODEL), 0);
  });
});

test('a stream the client leaves gives its slot back; so does a request the handler refuses (it never takes one)', async () => {
  const records: RequestRecord[] = [];
  // Real timers: a time to first token of a minute that only the client's leaving ends.
  await withApp({}, { observers: [(r) => void records.push(r)] }, async (url, app) => {
    use(app, scripted({ ttft: 60_000, interToken: 50, maxRunning: 1 }).control);
    const load = app.services.load;
    await leaving(url, () => waitFor('the stream holds the slot', () => load.running(MODEL) === 1), { stream: true });
    await waitFor('recorded', () => records.length === 1);
    assert.is(records[0]!.stream, 'aborted');
    assert.is(load.running(MODEL), 0);
    const refused = await chat(url, { max_tokens: 'many' });
    assert.is(refused.status, 400);
    assert.is(load.running(MODEL), 0);
  });
});

test('a plain chat answer waits ttft + prefill per prompt token + a gap per completion token, slowed by the load', async () => {
  await withAdmission(async (url, app, records) => {
    const profile: Profile = { ttft: 100, prefillMsPerToken: 2, interToken: 10, maxRunning: 3, loadFactor: 3 };
    const { control, asked } = scripted(profile);
    use(app, control);
    const sleeps = heldSleeps(app);
    const r1 = chat(url);
    await waitFor('one wait', () => sleeps.length === 1);
    sleeps[0]!.go();
    assert.is((await r1).status, 200);
    await waitFor('recorded', () => records.length === 1);
    const { promptTokens, completionTokens } = records[0]! as Required<RequestRecord>;
    assert.ok(promptTokens > 0 && completionTokens > 0);
    assert.is(sleeps[0]!.ms, 100 + 2 * promptTokens + 10 * completionTokens);
    assert.equal(asked, [100, ...Array<number>(completionTokens).fill(10)], 'ttft first, then one draw per token');
    // Two running besides: the third is slowed by 1 + (3 - 1)(3 - 1)/(3 - 1) = 3.
    app.services.load.acquire(MODEL);
    app.services.load.acquire(MODEL);
    const r2 = chat(url);
    await waitFor('a second wait', () => sleeps.length === 2);
    assert.is(sleeps[1]!.ms, 3 * (100 + 2 * promptTokens + 10 * completionTokens));
    sleeps[1]!.go();
    assert.is((await r2).status, 200);
  });
});

test('a stream: ttft (with prefill) from the slot, then a gap drawn per token; the header ttft/tps replace the profile', async () => {
  await withAdmission(async (url, app, records) => {
    const gaps = [3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73];
    const { control, asked, drawn } = scripted(
      { ttft: { type: 'normal', mean: 250, sd: 10 }, prefillMsPerToken: 1, interToken: 20 },
      { drawn: [250, ...gaps] },
    );
    use(app, control);
    const res = await chat(url, { stream: true });
    assert.is(res.status, 200);
    assert.match(res.text, /data: \[DONE\]/);
    await waitFor('recorded', () => records.length === 1);
    const r = records[0]! as Required<RequestRecord>;
    assert.ok(r.completionTokens <= gaps.length, 'the scripted gaps cover the reply');
    const events = r.sse.events;
    const first = events[0]!.ms;
    assert.is(first, 250 + r.promptTokens, 'the first event at ttft + prefill');
    const done = events.at(-1)!;
    assert.is(done.data, '[DONE]');
    const sum = gaps.slice(0, r.completionTokens).reduce((a, b) => a + b, 0);
    assert.is(done.ms - first, sum, 'one drawn gap per token');
    assert.is(asked.length, 1 + r.completionTokens);
    assert.is(app.services.load.running(MODEL), 0, 'the slot is given back when the stream ends');

    asked.length = 0;
    drawn.length = 0; // the rest of the script: the fixed values are drawn as they are
    records.length = 0;
    const fixed = await chat(url, { stream: true }, { 'x-mock-pacing': 'ttft=40; tps=100' });
    assert.is(fixed.status, 200);
    await waitFor('recorded', () => records.length === 1);
    const f = records[0]! as Required<RequestRecord>;
    assert.equal(asked, [40, ...Array<number>(f.completionTokens).fill(10)], 'fixed ttft and gaps from the header');
    assert.is(f.sse.events[0]!.ms, 40 + f.promptTokens);
  });
});

test("a queued stream's time to first token runs from when it got its slot, not from its arrival", async () => {
  await withAdmission(async (url, app, records, timers) => {
    const profile = { ttft: 100, maxRunning: 1, maxWaiting: 1 };
    use(app, scripted(profile).control);
    const held = app.services.load.acquire(MODEL) as Slot;
    const streamed = chat(url, { stream: true });
    await waitFor('it waits', () => app.services.load.waiting(MODEL) === 1);
    // Five seconds pass on the stream clock while it waits.
    await new Promise<void>((resolve) => timers.setTimeout(resolve, 5000));
    held.release();
    assert.is((await streamed).status, 200);
    await waitFor('recorded', () => records.length === 1);
    const r = records[0]! as Required<RequestRecord>;
    assert.is(r.queuedMs, 5000);
    assert.is(r.sse.events[0]!.ms, 100, 'the first event a time to first token after the slot, not at once');
  });
});

test("the header picks the profile: profile=off answers at once, with nothing drawn, in its model's lane", async () => {
  await withAdmission(async (url, app, records) => {
    const { control, asked, chosen } = scripted({ ttft: 100, maxRunning: 1 });
    use(app, control);
    const sleeps = heldSleeps(app);
    const res = await chat(url, {}, { 'x-mock-pacing': 'profile=off' });
    assert.is(res.status, 200);
    assert.equal(chosen[0], { model: MODEL, header: 'off' });
    assert.ok(
      chosen.slice(1).every((c) => c.header === undefined),
      "the rest ask for the model's own (its cap)",
    );
    assert.equal(asked, []);
    assert.is(sleeps.length, 0);
    await waitFor('recorded', () => records.length === 1);
    assert.is(records[0]!.profile, undefined);
    assert.is(records[0]!.queuedMs, 0, 'it took a slot of its model, at once, and gave it back');
    assert.is(app.services.load.running(MODEL), 0);
  });
});

test("media: images and both speech endpoints wait the profile's duration; tts without model_id answers at once", async () => {
  await withAdmission(async (url, app) => {
    const { control, chosen } = scripted({ duration: 4000, maxRunning: 4, loadFactor: 2 });
    use(app, control);
    const waits: number[] = [];
    app.services.clock.sleep = async (ms) => void waits.push(ms);
    assert.is((await post(url, pathOf('images.generate'), VALID['images.generate'])).status, 200);
    assert.is((await post(url, pathOf('cloud.speech'), VALID['cloud.speech'])).status, 200);
    assert.is((await post(url, pathOf('voice.tts'), VALID['voice.tts'])).status, 200);
    const tts = { ...VALID['voice.tts'], model_id: 'eleven_multilingual_v2' };
    assert.is((await post(url, pathOf('voice.tts'), tts)).status, 200);
    assert.equal(waits, [4000, 4000, 4000]);
    assert.equal(
      [...new Set(chosen.map((c) => c.model))], // asked for the request's timing and for the model's cap
      [VALID['images.generate']!.model, VALID['cloud.speech']!.voice, 'eleven_multilingual_v2'],
    );
    for (const model of app.services.load.models()) assert.is(app.services.load.running(model), 0);
  });
});

test('video: the task answers at once; under a profile its status follows the drawn duration by wall time', async () => {
  await withAdmission(async (url, app, records) => {
    const { control } = scripted({ duration: 20_000 });
    use(app, control);
    let now = 1_000_000;
    app.services.clock.now = () => now;
    const made = await post(url, pathOf('video.generate'), VALID['video.generate']);
    assert.is(made.status, 200);
    assert.is(made.json.status, 'queued');
    assert.is(made.json.video, null);
    const poll = () => get(url, `${pathOf('video.generate')}/${made.json.id}`).then((r) => r.json);
    now += 1999;
    assert.is((await poll()).status, 'queued', 'queued for the first tenth');
    now += 1;
    assert.is((await poll()).status, 'generating');
    now += 17_999;
    assert.is((await poll()).status, 'generating');
    now += 1;
    const done = await poll();
    assert.is(done.status, 'completed');
    assert.ok(done.video.url);
    await waitFor('recorded', () => records.length === 5);
    assert.is(records[0]!.profile, 'test');
  });
});

test("with a relay there is no admission: the replay fallback's mock answer keeps its timing", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'uam-admit-'));
  const records: RequestRecord[] = [];
  try {
    await withApp(
      { replay: dir, replayFallback: 'mock' },
      { observers: [(r) => void records.push(r)] },
      async (url, app) => {
        const { control, chosen } = scripted({ ttft: 5000, maxRunning: 1 });
        use(app, control);
        const waits: number[] = [];
        app.services.clock.sleep = async (ms) => void waits.push(ms);
        assert.is((await chat(url)).status, 200);
        assert.equal(chosen, []);
        assert.equal(waits, []);
        await waitFor('recorded', () => records.length === 1);
        assert.is(records[0]!.profile, undefined);
      },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('decided once: a request checks its model once, and a video task chooses its profile once', async () => {
  await withAdmission(async (url, app) => {
    const { control, chosen } = scripted({ duration: 0 });
    use(app, control);
    const catalogue = app.services.catalogue;
    const required: string[] = [];
    const require = catalogue.require.bind(catalogue);
    catalogue.require = (id, kind, param) => (required.push(id), require(id, kind, param));
    assert.is((await chat(url)).status, 200);
    const video = VALID['video.generate']!;
    chosen.length = 0; // the model's lane is looked up again by its slots (load.cap, load.acquire): a video task takes none
    assert.is((await post(url, pathOf('video.generate'), video, KEY)).status, 200);
    assert.equal(required, [MODEL, video.model]);
    assert.equal(chosen, [{ model: video.model, header: undefined }]);
  });
});

test('without a profile nothing changes: no wait, no slot, no profile in the record', async () => {
  await withAdmission(async (url, app, records) => {
    const sleeps = heldSleeps(app);
    assert.is((await chat(url)).status, 200);
    assert.is((await chat(url, { stream: true })).status, 200);
    // A pacing header is read on a plain answer too: one it cannot read is a 400, never dropped in silence.
    assert.is((await chat(url, {}, { 'x-mock-pacing': 'fast please' })).status, 400);
    // A valid one without a profile: pacing paces streams, a plain answer is written at once.
    assert.is((await chat(url, {}, { 'x-mock-pacing': 'ttft=5000' })).status, 200);
    const video = await post(url, pathOf('video.generate'), VALID['video.generate']);
    assert.is(video.json.status, 'completed');
    assert.is(sleeps.length, 0);
    assert.equal([...app.services.load.models()], []);
    await waitFor('recorded', () => records.length === 5);
    assert.ok(records.every((r) => r.profile === undefined && r.queuedMs === undefined));
  });
});

test.run();
