// The HTML report (--reporter html) as a CI user meets it: the file of a run against a defective target, opened from
// disk in the system's Chromium (playwright-core, no browser downloaded) with every network request recorded and
// refused. Without Chromium these tests print one line saying so and are skipped.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CHROMIUM_ARGS, findChromium } from '../../inspector/chromium.js';
import { jsonReportProblems } from '../../support/reports.js';
import { brokenServer, closeSharedMock, runCli, sharedMock, type JsonReport } from './harness.js';

const test = suite('conformance --reporter html: one self-contained file, opened offline in Chromium');

const SECRET = 'sk-html-report-secret-0123456789abcdef';
const HOSTILE =
  '</script><script>window.__pwned=1</script><img src="http://127.0.0.1:9/x.png" onerror="window.__pwned=2">';

/** What the checks read of the page (functions run in the page). */
interface Win {
  readonly __pwned?: number;
  readonly document: {
    readonly images: { readonly length: number };
    querySelectorAll(
      selector: string,
    ): ArrayLike<{ readonly hidden: boolean; readonly dataset: Record<string, string> }>;
  };
}

const executable = findChromium();
const dir = mkdtempSync(join(tmpdir(), 'html-report-'));
const file = join(dir, 'reports', 'conformance.html');
let html = '';
let report: JsonReport & { cases: { baselineResponse?: unknown }[] };
let browser: Browser;
let page: Page;
const requests: string[] = [];
const problems: string[] = [];

/** The cases the page shows now (not hidden by a filter), as their data attributes. */
const visible = () =>
  page.evaluate(() =>
    Array.from((globalThis as unknown as Win).document.querySelectorAll('#cases > details'))
      .filter((d) => !d.hidden)
      .map((d) => ({ id: d.dataset.id!, op: d.dataset.op!, verdict: d.dataset.verdict!, level: d.dataset.level! })),
  );

if (!executable) {
  console.log(
    '!!! SKIPPED test/tools/conformance/htmlReport.test.ts: no Chromium on PATH, so the HTML report was not opened in a browser. Install it: apt-get install -y chromium',
  );
} else {
  test.before(async () => {
    const mock = await sharedMock();
    // Accepts temperature 3 and answers it with the Authorization header it got and markup meant to break out of the
    // page; every other answer is the mock's.
    const server = await brokenServer({
      request: (r) => {
        r.headers['x-original-authorization'] = r.headers.authorization ?? '';
        if (r.headers.authorization?.includes(SECRET))
          r.headers.authorization = r.headers.authorization.replace(SECRET, 'sk-mock-default');
      },
      response: (res, req) => {
        if (typeof req.json?.temperature === 'number' && req.json.temperature > 2) {
          res.status = 200;
          res.headers['x-hostile'] = '"><img src=x onerror=alert(1)>';
          res.body = Buffer.from(JSON.stringify({ echo: req.headers['x-original-authorization'], html: HOSTILE }));
        }
      },
    });
    try {
      const out = await runCli([
        ...['--base-url', server.url, '--api-key', SECRET],
        ...['--baseline', mock.url, '--baseline-api-key', 'sk-mock-default', '--baseline-report-only'],
        ...['--only', 'chat.temperature,auth.basic,auth.missing,tts.voice_id', '--retries', '0'],
        ...['--reporter', 'html', '--output', file, '--reporter', 'json', '--output', join(dir, 'r.json')],
      ]);
      assert.is(out.code, 1, out.stderr);
    } finally {
      await server.close();
    }
    html = readFileSync(file, 'utf8');
    report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as typeof report;
    browser = await chromium.launch({ executablePath: executable, headless: true, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const own = pathToFileURL(file).href;
    // Every request the page makes is recorded; none but the file itself is let through.
    await context.route('**/*', (route) => {
      requests.push(route.request().url());
      return route.request().url() === own ? route.continue() : route.abort();
    });
    page = await context.newPage();
    page.on('request', (r) => requests.push(r.url()));
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console: ${msg.text()}`);
    });
    await page.goto(own);
    await page.locator('html[data-ready="true"]').waitFor();
  });

  test.after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
    await closeSharedMock();
  });

  test('one file: the report inline (no link, script or style fetched), no secret, the hostile answer only as data', () => {
    assert.not.ok(html.includes(SECRET), 'the key is not in the file');
    assert.ok(html.includes('sk-h...cdef'), 'its mask is');
    assert.not.match(html, /<(script|link|img|iframe)[^>]*\s(src|href)=/i);
    assert.is(html.match(/<\/script>/g)?.length, 2, "only the page's own two script elements end");
    assert.is(html.match(/<script/g)?.length, 2);
    const data = /<script type="application\/json" id="report-data">([^<]*)<\/script>/.exec(html);
    assert.ok(data, 'the data element holds no < at all');
    const embedded = JSON.parse(data![1]!) as typeof report;
    assert.equal(jsonReportProblems(embedded), [], 'the embedded data is the JSON report');
    assert.equal(
      embedded.cases.map((c) => c.id),
      report.cases.map((c) => c.id),
    );
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/);
  });

  test('opened from disk: no request but the file, nothing run from the answer, no error', async () => {
    assert.equal([...new Set(requests)], [pathToFileURL(file).href]);
    assert.equal(problems, []);
    assert.is(await page.evaluate(() => (globalThis as unknown as Win).__pwned), undefined);
    assert.is(await page.evaluate(() => (globalThis as unknown as Win).document.images.length), 0);
    assert.match(await page.title(), /^Conformance of http:\/\/127\.0\.0\.1:\d+: 1 failed, \d+ passed$/);
  });

  test('the summary and the levels: the counts of the run', async () => {
    const cards = await page.locator('.cards .card').allInnerTexts();
    const { passed, failed, warnings, inconclusive, notApplicable } = report.summary;
    assert.equal(
      cards.map((t) => t.replace(/\s+/g, ' ').trim()),
      [
        `${failed} failed`,
        `${warnings} warning`,
        `${inconclusive} inconclusive`,
        `${notApplicable} not applicable`,
        `${passed} passed`,
      ],
    );
    const should = report.cases.filter((c) => c.level === 'should').length;
    assert.ok(should > 0, 'the run has should cases');
    assert.match(await page.locator('#levels tr[data-level="should"]').innerText(), new RegExp(`\\t${should}$`));
    assert.match(
      await page.locator('#levels tr[data-level="must"]').innerText(),
      new RegExp(`\\t${report.cases.length - should}$`),
    );
  });

  test('the filters: operation, verdict and level, each alone and together, with the count shown', async () => {
    const all = report.cases.length;
    assert.is((await visible()).length, all);
    await page.selectOption('#filter-op', 'voice.tts');
    const tts = await visible();
    assert.ok(tts.length > 0 && tts.every((c) => c.op === 'voice.tts'));
    assert.is(tts.length, report.cases.filter((c) => c.operation === 'voice.tts').length);
    assert.is(await page.locator('#shown').innerText(), `Showing ${tts.length} of ${all} cases`);
    await page.selectOption('#filter-level', 'should');
    const should = await visible();
    assert.ok(should.length > 0 && should.every((c) => c.op === 'voice.tts' && c.level === 'should'));
    await page.selectOption('#filter-op', '');
    await page.selectOption('#filter-level', '');
    await page.selectOption('#filter-verdict', 'fail');
    assert.equal(
      (await visible()).map((c) => c.id),
      ['chat.temperature.above-maximum'],
    );
    assert.match(page.url(), /#verdict=fail$/, 'the filters are in the address, for a link');
    await page.selectOption('#filter-verdict', 'pass');
    assert.ok((await visible()).every((c) => c.verdict === 'pass'));
    assert.is((await visible()).length, report.summary.passed);
    // A card of the summary sets the verdict filter, and again clears it.
    await page.locator('.cards .card[data-verdict="fail"]').click();
    assert.is((await visible()).length, 1);
    assert.is(await page.locator('#filter-verdict').inputValue(), 'fail');
    await page.locator('.cards .card[data-verdict="fail"]').click();
    assert.is((await visible()).length, all);
  });

  test('a failing case: open, with its rule, the request sent beside the answer got and the baseline answer', async () => {
    const failing = page.locator('details[data-id="chat.temperature.above-maximum"]');
    assert.ok(await failing.evaluate((d) => (d as unknown as { open: boolean }).open), 'a failure is open');
    assert.match(await failing.locator('.rule').innerText(), /Rule: Chat request and Limits: temperature/);
    const sides = failing.locator('.exchange .side');
    assert.is(await sides.count(), 3);
    const [sent, got, baseline] = await sides.allInnerTexts();
    assert.match(sent!, /^Request sent\nPOST http:\/\/127\.0\.0\.1:\d+\/text-provider\/chat\/completions\n/);
    assert.match(sent!, /authorization: Bearer sk-h\.\.\.cdef/);
    assert.match(sent!, /"temperature": 2\.01/);
    assert.match(got!, /^Answer got\nstatus 200\n/);
    assert.match(got!, /x-hostile: "><img src=x onerror=alert\(1\)>/);
    assert.ok(got!.includes(JSON.stringify(HOSTILE)), 'the hostile answer is shown as text');
    assert.ok(got!.includes('"echo": "Bearer sk-h...cdef"'), 'the echoed key is masked');
    assert.match(baseline!, /^Baseline answer\nstatus 400\n/);
    assert.match(baseline!, /"type": "invalid_request_error"/);
    assert.match(
      (await failing.locator('.departures').innerText()).replace(/\s+/g, ' '),
      /^Departs from the baseline what target baseline status 2xx 400 error envelope absent present/,
    );
    // A passed case opens on a click, with its exchange.
    const passed = page.locator('details[data-id="auth.missing.me"]');
    await passed.locator('summary').click();
    assert.match(
      await passed.locator('.exchange').innerText(),
      /GET http:\/\/127\.0\.0\.1:\d+\/v1\/me[\s\S]*status 401/,
    );
    assert.not.ok((await page.content()).includes(SECRET));
    if (process.env.HTML_REPORT_SCREENSHOT)
      await page.screenshot({ path: process.env.HTML_REPORT_SCREENSHOT, fullPage: false });
  });
}

test.run();
