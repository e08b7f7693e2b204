// The request inspector (/__admin/) in a real browser: headless Chromium driven by playwright-core.
// No browser is downloaded: the system's Chromium is used (`apt-get install -y chromium` on Debian;
// .ci/run installs it). Without one, these tests print one line saying so and are skipped.
// INSPECTOR_SCREENSHOTS=1 also writes docs/inspector-*.png (the pictures in docs/inspector.md).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadLimits } from '../../src/domain/limits.js';
import { ROOT } from '../../src/lib/paths.js';
import { startMockServer, type MockServer } from '../../src/server/programmatic.js';
import { CHROMIUM_ARGS, findChromium } from './chromium.js';

/** The little of the page's DOM the checks read (functions run in the page: the CSP forbids string evaluation). */
interface Win {
  readonly document: {
    querySelectorAll(selector: string): ArrayLike<{ readonly textContent: string | null }>;
    querySelector(
      selector: string,
    ): { readonly naturalWidth: number; readonly duration: number; readonly readyState: number } | null;
    readonly activeElement: {
      readonly classList: { contains(name: string): boolean };
      closest(selector: string): unknown;
    } | null;
    readonly documentElement: { readonly scrollWidth: number };
  };
  readonly __pwned?: number;
}

/** The page's audio player, as the seeking check drives it (functions run in the page: each finds it itself). */
interface Player {
  currentTime: number;
  readonly readyState: number;
  readonly seekable: { readonly length: number; end(index: number): number };
  readonly dataset: Record<string, string | undefined>;
  addEventListener(type: 'seeked', listener: () => void, options: { once: boolean }): void;
}
interface PointWin {
  readonly document: {
    elementFromPoint(
      x: number,
      y: number,
    ): { closest(selector: string): { getAttribute(name: string): string | null } | null } | null;
  };
}
interface PlayerWin {
  readonly document: { querySelector(selector: string): Player };
}

const SHOTS = process.env.INSPECTOR_SCREENSHOTS === '1';
const executable = findChromium();

let mock: MockServer;
let client: OpenAI;
let context: BrowserContext;
let page: Page;
let profile: string;
const problems: string[] = [];

const ask = (content: string, extra: Record<string, unknown> = {}) =>
  client.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content }],
    ...extra,
  } as OpenAI.ChatCompletionCreateParamsNonStreaming);
const rows = () => page.locator('.rows .row-button');
// What the server holds, read through the admin API (not through the page).
const ruleIds = async (): Promise<string[]> =>
  ((await (await fetch(`${mock.url}/__admin/faults`)).json()) as { data: { id: string }[] }).data.map((r) => r.id);

/** Moves the mouse off the request list: while it points at the list, newer requests wait to be listed. */
const pointAway = () => page.mouse.move(0, 0);

/** Runs `send`, then waits until the page lists one more request: the live feed may trail the response. */
async function listed<T>(send: () => Promise<T>): Promise<T> {
  await pointAway();
  const before = await rows().count();
  const result = await send();
  await page.waitForFunction(
    (n) => (globalThis as unknown as Win).document.querySelectorAll('.rows .row-button').length > n,
    before,
  );
  return result;
}

async function openPage(p: Page): Promise<void> {
  await p.goto(mock.inspectorURL);
  await p.locator('.live.on').waitFor();
}

if (!executable) {
  console.log(
    '!!! SKIPPED test/inspector/browser.test.ts: no Chromium on PATH, so the request inspector was not tested in a browser. Install it: apt-get install -y chromium',
  );
} else {
  test.before(async () => {
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-inspector.mjs')]);
    mock = await startMockServer();
    client = new OpenAI({ baseURL: mock.openaiBaseURL, apiKey: mock.apiKey, maxRetries: 0 });
    profile = mkdtempSync(join(tmpdir(), 'uam-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: executable,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 800 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
    });
    await openPage(page);
  });
  // A test that clicked a row left the mouse on the list: the next one starts with it elsewhere.
  test.before.each(() => pointAway());
  test.after(async () => {
    await context?.close();
    await mock?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  test('requests sent with the openai SDK appear live, without a reload', async () => {
    await page.getByText('No requests yet').waitFor();
    await ask('Hello');
    await rows().first().waitFor();
    await ask('Hello again');
    await page.waitForFunction(
      () => (globalThis as unknown as Win).document.querySelectorAll('.rows .row-button').length === 2,
    );
    assert.match(await rows().first().innerText(), /chat\.completions/);
    assert.match(await rows().first().innerText(), /200/);
    assert.equal(problems, [], 'no script error and no CSP violation');
  });

  test('the first paint lists the journal the server has, before the feed or any fetch answers', async () => {
    // A mock of its own with three requests in its journal, one of them hostile markup.
    const own = await startMockServer();
    const fresh = await context.newPage();
    try {
      const sdk = new OpenAI({ baseURL: own.openaiBaseURL, apiKey: own.apiKey, maxRetries: 0 });
      const hostile = '</script><script>window.__pwned = 3</script><!--';
      for (const content of ['first', 'second', hostile])
        await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
      // The feed and the journal's own endpoint never answer: whatever the page lists came with the page.
      const held: (() => void)[] = [];
      await fresh.route(/\/__admin\/requests(\/events)?$/, (route) => void held.push(() => void route.abort()));
      const errors: string[] = [];
      fresh.on('pageerror', (err) => errors.push(err.message));
      await fresh.goto(own.inspectorURL, { waitUntil: 'domcontentloaded' });
      await fresh.locator('.rows .row-button').first().waitFor();
      assert.is(await fresh.locator('.rows .row-button').count(), 3);
      assert.is(await fresh.locator('.live').innerText(), 'Connecting…');
      assert.is(await fresh.getByText('No requests yet').count(), 0);
      assert.is(await fresh.getByText('Reconnecting').count(), 0);
      assert.is(await fresh.evaluate(() => (globalThis as unknown as Win).__pwned), undefined, 'the markup ran');
      assert.equal(errors, []);
      for (const release of held) release();
    } finally {
      await fresh.close();
      await own.close();
    }
  });

  test('a 400 opens with its violation: the field highlighted and the rule named', async () => {
    await ask('Too hot', { temperature: 5 }).catch((err: unknown) => assert.instance(err, OpenAI.BadRequestError));
    const row = rows().filter({ hasText: '400' }).first();
    await row.click();
    const detail = page.locator('.detail');
    await detail.locator('.violations').waitFor();
    assert.match(await detail.locator('.violations').innerText(), /temperature/);
    const flagged = detail.locator('.j-flagged');
    assert.is(await flagged.count(), 1);
    assert.match(await flagged.innerText(), /"temperature": 5/);
    assert.match(await flagged.innerText(), /invalid_value|maximum|2/);
    // The key is never shown: the Authorization header holds the masked label.
    const text = await detail.innerText();
    assert.not.match(text, /sk-mock-default/);
    assert.match(text, /authorization/i);
    if (SHOTS) await page.screenshot({ path: join(ROOT, 'docs', 'inspector-requests.png') });
  });

  test('the keyboard moves through the list, opens a request and closes it', async () => {
    await rows().first().focus();
    await page.keyboard.press('ArrowDown');
    await page.locator('.detail h2').waitFor();
    const selected = await page.locator('.row.selected').count();
    assert.is(selected, 1);
    // The opened request takes the focus (its heading) once it has rendered; Escape is read there.
    await page.waitForFunction(
      () => (globalThis as unknown as Win).document.activeElement?.closest('.detail') != null,
      null,
      { timeout: 5000 },
    );
    await page.keyboard.press('Escape');
    await page.locator('.detail').waitFor({ state: 'detached' });
    // Focus returns once the page has re-rendered the list (a frame after the detail is gone): wait for it.
    const back = await page
      .waitForFunction(
        () => (globalThis as unknown as Win).document.activeElement?.classList.contains('row-button') === true,
        null,
        { timeout: 5000 },
      )
      .then(() => true)
      .catch(() => false);
    assert.ok(back, 'focus goes back to the row');
  });

  test('a hostile body is shown as text: no script of it runs', async () => {
    const hostile = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
    await listed(() => ask(hostile));
    await rows().first().click();
    const body = page.getByLabel('Request body');
    await body.waitFor();
    assert.match(await body.innerText(), /<script>window\.__pwned = 1<\/script>/);
    assert.is(await page.evaluate(() => (globalThis as unknown as Win).__pwned), undefined);
    assert.is(await page.locator('.detail script, .detail img').count(), 0);
  });

  test('a hostile response body is shown as text: no script of it runs', async () => {
    // The 404 for an unknown model quotes the model: the response body holds the markup.
    const model = '<script>window.__pwned = 3</script><img src=x onerror="window.__pwned = 4">';
    await listed(() =>
      client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }] })
        .catch((err: unknown) => assert.instance(err, OpenAI.APIError)),
    );
    await rows().first().click();
    const body = page.getByLabel('Response body');
    await body.waitFor();
    assert.match(await body.innerText(), /<script>window\.__pwned = 3<\/script>/);
    assert.is(await page.evaluate(() => (globalThis as unknown as Win).__pwned), undefined);
    assert.is(await page.locator('.detail script, .detail img').count(), 0);
    await page.keyboard.press('Escape');
  });

  test('a body longer than the journal keeps is shown cut, with the bound of fixtures/limits.json', async () => {
    const { maxBodyChars } = loadLimits().records;
    await listed(() => ask('b'.repeat(maxBodyChars)));
    await rows().first().click();
    const note = page.locator('.detail p', { hasText: 'the journal keeps' }).first();
    await note.waitFor();
    // The page states the bound as the server applies it (KiB when a whole number of them).
    assert.match(
      await note.innerText(),
      new RegExp(`^The first ${maxBodyChars} of \\d+ characters \\(the journal keeps ${maxBodyChars / 1024} KiB\\)`),
    );
    await page.keyboard.press('Escape');
  });

  test('a streamed request opens with its events, their offsets and how the stream ended', async () => {
    const paced = { headers: { 'X-Mock-Pacing': 'tps=100' } };
    // A long stream: the journal keeps its start, and the page says how many there were.
    const longChunks = await listed(async () => {
      const long = await client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Stream me a long answer' }],
        stream: true,
      });
      let n = 0;
      for await (const _ of long) n++;
      return n;
    });
    await rows().first().click();
    await page.getByRole('table', { name: 'Stream events' }).waitFor();
    const kept = await page.getByRole('table', { name: 'Stream events' }).locator('td.at').count();
    assert.ok(kept > 0 && kept < longChunks + 1, `a long stream is cut: ${kept} of ${longChunks + 1}`);
    assert.match(
      await page.locator('.stream-note, .detail').first().innerText(),
      new RegExp(`${longChunks + 1} events[^]*The first ${kept} are shown`),
    );
    await page.keyboard.press('Escape');
    // A short one whole.
    const chunks = await listed(async () => {
      const stream = await client.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }], stream: true },
        paced,
      );
      let n = 0;
      for await (const _ of stream) n++;
      return n;
    });
    await rows().first().click();
    const table = page.getByRole('table', { name: 'Stream events' });
    await table.waitFor();
    const at = (await table.locator('td.at').allInnerTexts()).map(Number);
    assert.is(at.length, chunks + 1, 'each chunk and [DONE]');
    assert.ok(
      at.every((t, i) => Number.isFinite(t) && (i === 0 || t >= at[i - 1]!)),
      `offsets in order: ${at.join(' ')}`,
    );
    assert.ok(at[at.length - 1]! > at[0]!, 'paced: the last event comes later than the first');
    assert.match(await table.locator('tr').last().innerText(), /\[DONE\]/);
    assert.match(await table.locator('td.gap').nth(1).innerText(), /^\+\d+\.\d$/);
    assert.match(await page.locator('.stream-ending').innerText(), /ended normally/);
    if (SHOTS) await page.screenshot({ path: join(ROOT, 'docs', 'inspector-stream.png') });
    // A stream cut by a fault says so.
    const cut = await client.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Cut me' }], stream: true },
      { headers: { 'X-Mock-Fault': 'stream-cut=2' } },
    );
    await (async () => {
      for await (const _ of cut);
    })().catch(() => undefined);
    await pointAway();
    await page.waitForFunction(
      () =>
        (globalThis as unknown as Win).document
          .querySelectorAll('.rows .row-button')[0]
          ?.textContent?.includes('cut') === true,
    );
    await page.locator('.rows .row-button').first().click();
    await page.locator('.stream-ending', { hasText: 'cut by a fault' }).waitFor();
    assert.is(await page.getByRole('table', { name: 'Stream events' }).locator('tbody tr').count(), 2);
    await page.keyboard.press('Escape');
  });

  test('speech opens as an audio player whose source plays', async () => {
    const res = await fetch(`${mock.url}/voice-provider/tts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${mock.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hello from the inspector test, spoken.', voice_id: 'rachel' }),
    });
    assert.is(res.status, 200);
    await res.arrayBuffer();
    await page.locator('.row-button', { hasText: 'voice.tts' }).first().click();
    const audio = page.locator('.detail audio.media');
    await audio.waitFor();
    const src = await audio.getAttribute('src');
    const body = await fetch(mock.url + src!);
    assert.is(body.status, 200);
    assert.match(body.headers.get('content-type') ?? '', /^audio\//);
    await page.waitForFunction(
      () => ((globalThis as unknown as Win).document.querySelector('.detail audio.media')?.readyState ?? 0) >= 1,
      null,
      { timeout: 10000 },
    );
    const duration = await page.evaluate(
      () => (globalThis as unknown as Win).document.querySelector('.detail audio.media')?.duration ?? 0,
    );
    assert.ok(duration > 0, `the audio has a duration (${duration})`);
    await page.keyboard.press('Escape');
  });

  test('a long speech answer seeks: the player asks the body endpoint for a byte range and plays from there', async () => {
    // About 133 s of 48 kHz 16-bit WAV, 12.8 MB: far more than preload="metadata" reads, so a seek near
    // the end needs bytes the player does not have, and it can only get them with a Range request.
    const res = await fetch(`${mock.url}/cloud-provider/speech`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${mock.apiKey}`,
        'content-type': 'application/json',
        'x-microsoft-outputformat': 'riff-48khz-16bit-mono-pcm',
      },
      body: JSON.stringify({ text: 'Seek here. '.repeat(182), voice: 'en-US-JennyNeural' }),
    });
    assert.is(res.status, 200);
    const total = (await res.arrayBuffer()).byteLength;
    const bodyPath = `/__admin/requests/${res.headers.get('x-request-id')}/body`;
    const rangeStart = (range: string | undefined): number => Number(/^bytes=(\d+)-$/.exec(range ?? '')?.[1] ?? -1);
    await page.locator('.row-button', { hasText: 'cloud.speech' }).first().click();
    await page.locator('.detail audio.media').waitFor();
    assert.is(await page.locator('.detail audio.media').getAttribute('src'), bodyPath);
    await page.waitForFunction(
      () => (globalThis as unknown as PlayerWin).document.querySelector('.detail audio.media').readyState >= 1,
      null,
      { timeout: 30000 },
    );
    // The seek's own request: a range that starts past the first byte (the first request asks for bytes=0-).
    const seekRequest = page
      .waitForResponse((r) => new URL(r.url()).pathname === bodyPath && rangeStart(r.request().headers().range) > 0, {
        timeout: 30000,
      })
      .catch(() => undefined);
    const target = 100;
    await page.evaluate((t) => {
      const audio = (globalThis as unknown as PlayerWin).document.querySelector('.detail audio.media');
      // No named function here: the test's compiler would wrap it in a helper the page does not have.
      audio.addEventListener(
        'seeked',
        () => {
          const { seekable } = audio;
          audio.dataset.seekableTo = String(seekable.length > 0 ? seekable.end(seekable.length - 1) : 0);
          audio.dataset.seekedAt = String(audio.currentTime);
        },
        { once: true },
      );
      audio.currentTime = t;
    }, target);
    await page.locator('.detail audio.media[data-seeked-at]').waitFor({ state: 'attached', timeout: 30000 });
    const reached = Number(await page.locator('.detail audio.media').getAttribute('data-seeked-at'));
    const seekableTo = await page.locator('.detail audio.media').getAttribute('data-seekable-to');
    assert.ok(
      Math.abs(reached - target) < 1,
      `the player reached ${target} s: it is at ${reached} s (seekable to ${seekableTo} s)`,
    );
    const seek = await seekRequest;
    assert.ok(seek, 'the player asked for a range that starts past the first byte');
    const start = rangeStart(seek.request().headers().range);
    assert.ok(start > total / 2, `the range starts near the target (byte ${start} of ${total})`);
    assert.is(seek.status(), 206);
    assert.is(seek.headers()['content-range'], `bytes ${start}-${total - 1}/${total}`);
    await page.keyboard.press('Escape');
  });

  test('an image answer opens with its images: b64_json and a link of this server', async () => {
    for (const response_format of ['b64_json', 'url'] as const) {
      await listed(() =>
        client.images.generate({
          model: 'dall-e-3',
          prompt: `a harbour, ${response_format}`,
          size: '1024x1024',
          response_format,
        }),
      );
      await rows().first().click();
      await page.locator('.detail .media-row img.media').waitFor();
      await page.waitForFunction(
        () =>
          ((globalThis as unknown as Win).document.querySelector('.detail .media-row img.media')?.naturalWidth ?? 0) >
          0,
        null,
        { timeout: 10000 },
      );
      const src = (await page.locator('.detail .media-row img.media').getAttribute('src')) ?? '';
      assert.match(src, response_format === 'b64_json' ? /^data:image\/png;base64,/ : /^\/media\/images\//);
      await page.keyboard.press('Escape');
    }
  });

  test('a fault rule added on the page fails the next SDK call; removed and enabled again', async () => {
    await page.getByRole('tab', { name: /Faults/ }).click();
    await page.getByRole('radio', { name: 'One 500' }).click();
    await page.getByLabel('Operation').selectOption('chat.completions');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.locator('td', { hasText: 'one-500' }).waitFor();
    const failed = await ask('Hello').catch((err: unknown) => err);
    assert.instance(failed, OpenAI.InternalServerError);
    assert.ok(await ask('Hello'), 'times: 1, so the next call succeeds');
    if (SHOTS) await page.screenshot({ path: join(ROOT, 'docs', 'inspector-faults.png') });
    await page.getByRole('button', { name: 'Remove rule one-500' }).click();
    await page.getByRole('button', { name: 'Enable rule one-500 again' }).waitFor();
    assert.equal(await ruleIds(), []);
    await page.getByRole('button', { name: 'Enable rule one-500 again' }).click();
    await page.locator('td', { hasText: 'one-500' }).waitFor();
    assert.equal(await ruleIds(), ['one-500']);
    await page.getByRole('button', { name: /Reset all/ }).click();
    await page.getByText('full allowance again').waitFor();
    mock.clearFaultRules();
    await page.getByRole('tab', { name: /Requests/ }).click();
    await page.locator('.tag-fault', { hasText: 'rule one-500' }).first().waitFor();
  });

  test('the latency tab shows the profile of each model; switched there, the next request answers with it', async () => {
    const latency = async () =>
      (await (await fetch(`${mock.url}/__admin/latency`)).json()) as {
        profile: string;
        models: { model: string; profile: string | null; from: string | null }[];
      };
    const journalled = async () =>
      ((await (await fetch(`${mock.url}/__admin/requests`)).json()) as { data: { profile?: string }[] }).data.at(-1);
    await page.getByRole('tab', { name: 'Latency' }).click();
    const select = page.getByLabel('Profile of gpt-4o-mini');
    await select.waitFor();
    assert.equal(await select.inputValue(), 'off', 'latency is off until someone turns it on');
    await page
      .getByRole('row', { name: /small-fast/ })
      .first()
      .waitFor();
    await select.selectOption('small-fast');
    await page.getByText('gpt-4o-mini now answers with small-fast.').waitFor();
    const set = (await latency()).models.find((m) => m.model === 'gpt-4o-mini');
    assert.equal(set, { ...set!, profile: 'small-fast', from: 'admin' });
    await ask('Hello');
    assert.equal((await journalled())?.profile, 'small-fast', 'the next request answered with the profile');
    await page.getByLabel('Every model').selectOption('catalogue');
    await page.getByText('Every model now answers with catalogue.').waitFor();
    assert.equal((await latency()).profile, 'catalogue');
    await page.getByRole('button', { name: 'Back to the configuration' }).click();
    await page.getByText('Back to the configuration:').waitFor();
    const back = await latency();
    assert.equal(back.profile, 'off');
    assert.equal(back.models.find((m) => m.model === 'gpt-4o-mini')?.profile, null);
    await ask('Hello');
    assert.equal((await journalled())?.profile, undefined, 'answered at once again');
    await page.getByRole('tab', { name: /Requests/ }).click();
  });

  test('retries of one call show as one attempt chain', async () => {
    const retrying = new OpenAI({ baseURL: mock.openaiBaseURL, apiKey: mock.apiKey, maxRetries: 2 });
    mock.addFaultRule({
      id: 'flaky',
      match: { operation: 'chat.completions' },
      fault: { status: 503, retryAfter: 0.01 },
      times: 2,
    });
    await retrying.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'retry me' }] });
    mock.clearFaultRules();
    const chain = page.locator('.tag-chain', { hasText: '3 attempts: 503 → 503 → 200' });
    await chain.waitFor();
    await chain.click();
    assert.is(await page.locator('.attempts .attempt').count(), 3);
  });

  test('filters narrow the list by status', async () => {
    await page.getByLabel('Status').selectOption('4xx');
    await page.waitForFunction(() =>
      Array.from((globalThis as unknown as Win).document.querySelectorAll('.rows .status')).every(
        (s) => s.textContent === '400',
      ),
    );
    await page.getByRole('button', { name: 'Clear filters' }).click();
  });

  test('the search box finds one request among many by its x-request-id, or by a word of its prompt', async () => {
    await listed(() =>
      client.chat.completions.create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'plain' }] },
        { headers: { 'x-request-id': 'ci-run-7-find-me' } },
      ),
    );
    await listed(() => ask('Describe a pelican on a bicycle'));
    await listed(() => ask('Describe a heron'));
    const search = page.getByLabel('Search');
    const only = async (text: string, expected: RegExp) => {
      await search.fill(text);
      await page.waitForFunction(
        () => (globalThis as unknown as Win).document.querySelectorAll('.rows .row-button').length === 1,
      );
      await rows().first().click();
      assert.match(await page.locator('.detail').innerText(), expected);
    };
    await only('ci-run-7-find-me', /ci-run-7-find-me/);
    await only('PELICAN bicycle', /pelican on a bicycle/);
    await search.fill('no request says this');
    await page.getByText('No request matches the filters.').waitFor();
    await only('heron', /a heron/);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    assert.is(await search.inputValue(), '');
  });

  test('a media download opens as the image itself', async () => {
    const res = await client.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse at dusk', size: '1024x1024' });
    assert.is((await fetch(res.data![0]!.url!)).status, 200);
    const row = await page.locator('.row-button', { hasText: 'media.image' }).first().elementHandle();
    // A newer request arrives and is listed above the download: the download's row keeps its request (the
    // list is keyed by request, so a row never shows another request's content under the pointer).
    await listed(() => ask('a newer request, listed above the download'));
    assert.match(await row!.innerText(), /media\.image/);
    await row!.press('Enter');
    const img = page.locator('.detail img.media');
    await img.waitFor();
    assert.match((await img.getAttribute('src')) ?? '', /^\/media\/images\//, 'the detail is the download itself');
    await page.waitForFunction(
      () => ((globalThis as unknown as Win).document.querySelector('.detail img.media')?.naturalWidth ?? 0) > 0,
    );
    await page.keyboard.press('Escape');
  });

  test('while the mouse points at the list, a newer request waits: the row under the pointer stays', async () => {
    await listed(() => ask('one more, so the list has rows to point at'));
    const target = rows().nth(1);
    const chain = await target.getAttribute('data-chain');
    const box = (await target.boundingBox())!;
    const at = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    await page.mouse.move(at.x, at.y);
    const count = await rows().count();
    const received = Number(await page.locator('#tab-requests .count').innerText());
    await ask('a newer request, sent while the pointer rests on a row');
    // The page has it (the tab counts every request it holds) before the rows are read.
    await page.locator('#tab-requests .count', { hasText: new RegExp(`^${received + 1}$`) }).waitFor();
    const under = await page.evaluate(
      (p) =>
        (globalThis as unknown as PointWin).document
          .elementFromPoint(p.x, p.y)
          ?.closest('.row-button')
          ?.getAttribute('data-chain'),
      at,
    );
    assert.is(under, chain, 'the row under the pointer is the one pointed at');
    assert.is(await rows().count(), count, 'the newer request is not listed yet');
    assert.match(await page.locator('.live').innerText(), /1 new/);
    await pointAway();
    await page.waitForFunction(
      (n) => (globalThis as unknown as Win).document.querySelectorAll('.rows .row-button').length === n + 1,
      count,
    );
    assert.not.match(await page.locator('.live').innerText(), /new/);
  });

  test('on a phone-sized screen the list and one request are usable', async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await openPage(phone);
    await phone.locator('.rows .row-button').first().waitFor();
    const wide = await phone.evaluate(() => (globalThis as unknown as Win).document.documentElement.scrollWidth);
    assert.ok(wide <= 390, `no horizontal scrolling (${wide}px)`);
    if (SHOTS) await phone.screenshot({ path: join(ROOT, 'docs', 'inspector-mobile.png') });
    await phone.locator('.rows .row-button').filter({ hasText: '400' }).first().click();
    await phone.getByRole('button', { name: /Close this request/ }).waitFor();
    if (SHOTS) await phone.screenshot({ path: join(ROOT, 'docs', 'inspector-mobile-detail.png') });
    await phone.getByRole('button', { name: /Close this request/ }).click();
    await phone.locator('.rows').waitFor();
    await phone.close();
  });

  test('the page and its script set a strict Content-Security-Policy', async () => {
    for (const path of ['/__admin/', '/__admin/inspector.js', '/__admin/inspector.css']) {
      const res = await fetch(mock.url + path);
      assert.is(res.status, 200, path);
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self';/);
      assert.not.match(csp, /unsafe-inline|unsafe-eval/);
    }
    assert.equal(problems, [], 'no script error and no CSP violation');
  });

  test('with --admin-token, /__admin/?token=... signs the browser in: the page, its feed, media and changes work', async () => {
    const token = 'browser-admin-token-7';
    const guarded = await startMockServer({ adminToken: token });
    const tab = await context.newPage();
    const seen: string[] = [];
    tab.on('pageerror', (err) => seen.push(`page error: ${err.message}`));
    // A new origin's page asks for /favicon.ico, which the mock does not serve (404): not the page's doing.
    tab.on(
      'console',
      (msg) =>
        void (
          msg.type() === 'error' &&
          !msg.location().url.endsWith('/favicon.ico') &&
          seen.push(`console: ${msg.text()}`)
        ),
    );
    try {
      const sdk = new OpenAI({ baseURL: guarded.openaiBaseURL, apiKey: guarded.apiKey, maxRetries: 0 });
      assert.is((await tab.goto(guarded.inspectorURL))!.status(), 403, 'without the token, the page is refused');
      seen.length = 0; // the refused page's own console line (its 403)
      await tab.goto(`${guarded.inspectorURL}?token=${token}`);
      assert.is(tab.url(), guarded.inspectorURL, 'landed on /__admin/, the token gone from the address');
      await tab.locator('.live.on').waitFor(); // the feed (EventSource) is open: the cookie rode along
      await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Signed in' }] });
      await tab.locator('.rows .row-button', { hasText: 'chat.completions' }).first().waitFor();
      // A media element sends the cookie too: speech opens as audio that loads.
      const spoken = await fetch(`${guarded.url}/voice-provider/tts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${guarded.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Hello through the session cookie.', voice_id: 'rachel' }),
      });
      await spoken.arrayBuffer();
      await tab.locator('.row-button', { hasText: 'voice.tts' }).first().click();
      await tab.locator('.detail audio.media').waitFor();
      await tab.waitForFunction(
        () => ((globalThis as unknown as Win).document.querySelector('.detail audio.media')?.readyState ?? 0) >= 1,
        null,
        { timeout: 10000 },
      );
      await tab.keyboard.press('Escape');
      // A change made on the page passes the same-origin check (its Origin and x-uam-admin header).
      await tab.getByRole('tab', { name: /Faults/ }).click();
      await tab.getByRole('radio', { name: 'One 500' }).click();
      await tab.getByRole('button', { name: 'Add rule' }).click();
      await tab.locator('td', { hasText: 'one-500' }).waitFor();
      assert.equal(
        guarded.faultRules().map((r) => r.id),
        ['one-500'],
      );
      const cookies = await context.cookies(guarded.inspectorURL);
      const session = cookies.find((c) => c.name === `uam_admin_${guarded.port}`);
      assert.ok(
        session && session.httpOnly && session.sameSite === 'Strict' && session.path === '/__admin',
        JSON.stringify(cookies),
      );
      assert.not.ok(JSON.stringify(cookies).includes(token), 'the cookie is not the token');
      assert.equal(seen, [], 'no script error and no CSP violation');
    } finally {
      await tab.close();
      await guarded.close();
    }
  });
}

test.run();
