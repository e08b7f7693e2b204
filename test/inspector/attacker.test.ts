// The admin API and the inspector against a web page that wants the developer's journal, in a real
// browser (Debian's Chromium through playwright-core), with no admin token, as `npm start` runs:
// - cross-site request forgery: a page of another site posts a form, and sends no-cors fetches, to the
//   mock's admin API on 127.0.0.1;
// - DNS rebinding: a page of a domain that resolves to 127.0.0.1 is a loopback client of the mock, on
//   the mock's own port; after the rebind its requests are same-origin and carry that domain as Host.
// Chromium's --host-resolver-rules stands in for the attacker's DNS: evil.example and rebind.example
// resolve to 127.0.0.1, as the attacker's name server would make them.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { start, type RunningMock } from '../../src/server/server.js';
import { get, KEY } from '../support/index.js';
import { CHROMIUM_ARGS, findChromium } from './chromium.js';

const executable = findChromium();

let mock: RunningMock;
let attacker: Server;
let context: BrowserContext;
let page: Page;
let profile: string;
let mockPort: number;
let evilOrigin: string;

/** The attacker's pages: each tries one way in and says when it is done (`window.done`). */
function pages(target: string): Record<string, string> {
  const form = (action: string, enctype: string, name: string, value: string) =>
    `<form method="post" enctype="${enctype}" action="${target}${action}"><input name='${name}' value='${value}'></form><script>document.forms[0].submit()</script>`;
  return {
    '/form-reset': form('/__admin/reset', 'text/plain', 'x', 'y'),
    // The old trick for a JSON body through a text/plain form: the field's name and value make the JSON.
    '/form-fault': form('/__admin/faults', 'text/plain', '{"id":"evil","fault":{"status":500},"x":"', '"}'),
    '/form-urlencoded': form('/__admin/reset', 'application/x-www-form-urlencoded', 'a', 'b'),
    '/fetch': `<script>
      const t = ${JSON.stringify(target)};
      const rule = JSON.stringify({ id: 'evil-fetch', fault: { status: 500 } });
      const tries = [
        fetch(t + '/__admin/reset', { method: 'POST', mode: 'no-cors' }),
        fetch(t + '/__admin/reset', { method: 'POST', mode: 'no-cors', body: 'x' }),
        fetch(t + '/__admin/faults', { method: 'POST', mode: 'no-cors', body: new Blob([rule]) }),
        fetch(t + '/__admin/faults', { method: 'POST', mode: 'no-cors', body: rule, headers: { 'content-type': 'text/plain' } }),
      ];
      // A read with CORS: the mock grants none, so the answer never reaches the page.
      const read = fetch(t + '/__admin/requests').then((r) => r.text(), (e) => 'blocked: ' + e.name);
      Promise.allSettled(tries).then(() => read).then((r) => { window.readResult = r; window.done = true; });
    </script>`,
  };
}

const responses: { url: string; status: number }[] = [];

if (!executable) {
  console.log(
    '!!! SKIPPED test/inspector/attacker.test.ts: no Chromium on PATH, so the admin API was not tested against a hostile page. Install it: apt-get install -y chromium',
  );
} else {
  test.before(async () => {
    // A key with one request a minute: a reset that went through would give its allowance back.
    mock = await start({ port: 0, keys: [{ key: KEY, rateLimit: { requests: 1 } }], logLevel: 'silent' });
    mockPort = Number(new URL(mock.url).port);
    const served = pages(`http://127.0.0.1:${mockPort}`);
    attacker = createServer((req, res) => {
      const body = served[req.url ?? ''];
      res.writeHead(body ? 200 : 404, { 'content-type': 'text/html' }).end(body ?? 'not found');
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    evilOrigin = `http://evil.example:${(attacker.address() as { port: number }).port}`;
    profile = mkdtempSync(join(tmpdir(), 'uam-attacker-'));
    const args = [...CHROMIUM_ARGS, '--host-resolver-rules=MAP evil.example 127.0.0.1, MAP rebind.example 127.0.0.1'];
    context = await chromium.launchPersistentContext(profile, { executablePath: executable, headless: true, args });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('response', (r) => {
      if (new URL(r.url()).port === String(mockPort)) responses.push({ url: r.url(), status: r.status() });
    });
    // The key's one request: from now on it is limited until a reset.
    assert.is((await get(mock.url, '/v1/me')).status, 200);
    assert.is((await get(mock.url, '/v1/me')).status, 429);
  });
  test.before.each(() => {
    responses.length = 0;
  });
  test.after(async () => {
    await context?.close();
    await new Promise((resolve) => attacker?.close(resolve));
    await mock?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  /** What the mock's state shows, read by a script: rules, and whether the key is still limited. */
  async function unchanged(): Promise<void> {
    assert.equal((await get(mock.url, '/__admin/faults', null)).json.data, [], 'no fault rule was added');
    assert.is((await get(mock.url, '/v1/me')).status, 429, 'no reset gave the key its allowance back');
  }

  for (const form of ['/form-reset', '/form-fault', '/form-urlencoded']) {
    test(`a cross-site form post (${form}) is refused and changes nothing`, async () => {
      const answered = page.waitForResponse((r) => r.url().startsWith(`http://127.0.0.1:${mockPort}/__admin/`));
      await page.goto(`${evilOrigin}${form}`);
      assert.is((await answered).status(), 403);
      await unchanged();
    });
  }

  test('no-cors fetches from another site are refused, and a CORS read never reaches the page', async () => {
    await page.goto(`${evilOrigin}/fetch`);
    await page.waitForFunction(() => (globalThis as unknown as { done?: boolean }).done === true);
    const read = await page.evaluate(() => (globalThis as unknown as { readResult: string }).readResult);
    assert.match(read, /^blocked/);
    const changes = responses.filter((r) => !r.url.endsWith('/__admin/requests'));
    assert.is(changes.length, 4, JSON.stringify(responses));
    for (const r of responses) assert.is(r.status, 403, r.url);
    await unchanged();
  });

  test('DNS rebinding: a page on a rebound name cannot open the inspector, read the journal or its feed, or reset', async () => {
    const rebound = `http://rebind.example:${mockPort}`;
    assert.is((await page.goto(`${rebound}/__admin/`))?.status(), 403);
    // A page of the rebound origin (any answer of the mock serves as one), now same-origin with the mock.
    await page.goto(`${rebound}/__health`);
    const tried = await page.evaluate(async () => {
      const read = await fetch('/__admin/requests');
      const reset = await fetch('/__admin/reset', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-uam-admin': '1' },
        body: '{}',
      });
      const feed = await new Promise<string>((resolve) => {
        const source = new EventSource('/__admin/requests/events');
        source.onopen = () => (source.close(), resolve('open'));
        source.onerror = () => (source.close(), resolve('refused'));
      });
      return { read: read.status, body: await read.text(), reset: reset.status, feed };
    });
    assert.is(tried.read, 403);
    assert.match(tried.body, /--allowed-host/);
    assert.not.match(tried.body, /chat|messages/);
    assert.is(tried.reset, 403);
    assert.is(tried.feed, 'refused');
    await unchanged();
  });

  test('the inspector of this origin still works by a loopback name: its page, feed and changes', async () => {
    const own = `http://localhost:${mockPort}`;
    assert.is((await page.goto(`${own}/__admin/`))?.status(), 200);
    const tried = await page.evaluate(async () => {
      const feed = await new Promise<string>((resolve) => {
        const source = new EventSource('/__admin/requests/events');
        source.onopen = () => (source.close(), resolve('open'));
        source.onerror = () => (source.close(), resolve('refused'));
      });
      const reset = await fetch('/__admin/reset', { method: 'POST', headers: { 'x-uam-admin': '1' } });
      return { feed, reset: reset.status };
    });
    assert.equal(tried, { feed: 'open', reset: 200 });
    assert.is((await get(mock.url, '/v1/me')).status, 200, "the page's own reset went through");
  });

  test.run();
}
