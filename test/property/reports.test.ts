// Property tests of the reports: whatever the API key (1 to 200 characters: words any text holds, the reports' own
// words and markup, XML, JSON and HTML metacharacters, any Unicode), every reporter's output parses with a real parser
// (xmllint against Jenkins' JUnit schema, tap-parser, the JSON report's schema), has every case, and shows no key of
// 8 characters or more; a shorter key is kept out of the places it was sent (the credential's header, query or
// cookie) by its mask. The target echoes every request it gets, key and all, so masking is tested where it counts.
// Client-check's reporters get the same: their output parses and has every scenario, whatever a client printed.
// Runs: REPORT_RUNS (default 40) keys, and as many client texts. A failure prints its seed; replay it with
// PROPERTY_SEED=<seed> PROPERTY_PATH=<path>.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { XMLParser } from 'fast-xml-parser';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SchemaRegistry } from '../../src/contract/schemas.js';
import { Catalogue } from '../../src/domain/catalogue.js';
import { checksFor } from '../../src/verdict/checks.js';
import { summarize, type Report, type Reporter } from '../../src/verdict/report.js';
import { htmlReporter } from '../../src/verdict/reporters/html.js';
import { jsonReporter } from '../../src/verdict/reporters/json.js';
import { junitReporter } from '../../src/verdict/reporters/junit.js';
import { prettyReporter } from '../../src/verdict/reporters/pretty.js';
import { tapReporter } from '../../src/verdict/reporters/tap.js';
import type { Case, CaseResult } from '../../src/verdict/types.js';
import { runSuite } from '../../src/tools/conformance/run.js';
import { selectCases } from '../../src/tools/conformance/select.js';
import { loadSuite } from '../../src/tools/conformance/suite.js';
import { jsonReporter as checkJsonReporter } from '../../src/tools/clientCheck/reporters/json.js';
import { junitReporter as checkJunitReporter } from '../../src/tools/clientCheck/reporters/junit.js';
import { prettyReporter as checkPrettyReporter } from '../../src/tools/clientCheck/reporters/pretty.js';
import type { CheckReport, CheckReporter } from '../../src/tools/clientCheck/report.js';
import { loadScenarios } from '../../src/tools/clientCheck/scenarios.js';
import { maskKey } from '../../src/domain/keys.js';
import { jsonReportProblems, junitProblems, junitTestcases, parseTap } from '../support/reports.js';

const test = suite('reports: every reporter parses, has every case and shows no key, whatever the key');

const RUNS = Number(process.env.REPORT_RUNS ?? 40);
const params = (): fc.Parameters<unknown> => ({
  numRuns: RUNS,
  ...(process.env.PROPERTY_SEED ? { seed: Number(process.env.PROPERTY_SEED) } : {}),
  ...(process.env.PROPERTY_PATH ? { path: process.env.PROPERTY_PATH } : {}),
});

/** Runs a property; a failure names the seed and path that replay it. */
async function check<T>(name: string, arb: fc.Arbitrary<T>, predicate: (v: T) => Promise<void>): Promise<void> {
  const details = await fc.check(fc.asyncProperty(arb, predicate), params() as fc.Parameters<[T]>);
  if (details.failed) {
    const report = await fc.asyncDefaultReportMessage(details);
    throw new Error(
      `${name}\n${report}\n${String(details.errorInstance)}\nReplay: PROPERTY_SEED=${details.seed} PROPERTY_PATH=${details.counterexamplePath} node --import tsx test/run.ts test/property 'reports\\.test\\.ts$'`,
    );
  }
}

// Words any text holds, the reports' own vocabulary and markup, and metacharacters of every format they are in.
const WORDS = ['test', 'key', 'a', 'api', 'secret', 'password', 'token', 'Bearer', 'Basic', 'sk-', 'ok', 'null'];
const VOCABULARY = [
  'testcase',
  'testsuite',
  'testsuites',
  'failure',
  'failures',
  'passed',
  'failed',
  'skipped',
  'message',
  'classname',
  'system-out',
  'properties',
  'encoding',
  'UTF-8',
  'version',
  'cases',
  'summary',
  'verdict',
  'request',
  'response',
  'headers',
  'authorization',
  'content-type',
  'application/json',
  '/text-provider',
  '/v1/me',
  'chat.completions',
  'must',
  'should',
  'rule',
  'not ok',
  'TAP version 13',
  '1..',
  '# SKIP',
  '---',
  '...',
  'html',
  'script',
  '</script>',
  '<!--',
  '-->',
  '\\u003c',
  'report-data',
  'http://127.0.0.1',
];
const METACHARACTERS = ['<', '>', '&', '"', "'", '\\', '<&>"\'', '&amp;', ']]>', '{"', '":', '\n', '\t', ' ', '#', '|'];
const UNICODE = ['😀', 'e\u0301', 'ﬃ', '\u202e', '\u200d', '漢字', '\u0000', '\ud800', '\ufffe', 'ß', '\u00a0'];

const piece = fc.constantFrom(...WORDS, ...VOCABULARY, ...METACHARACTERS, ...UNICODE);
const keyArbitrary = fc
  .oneof(
    fc.constantFrom(...WORDS, ...VOCABULARY, ...METACHARACTERS, ...UNICODE),
    fc.array(piece, { minLength: 2, maxLength: 12 }).map((parts) => parts.join('')),
    fc.string({ minLength: 1, maxLength: 200, unit: 'grapheme' }),
    fc.string({ minLength: 1, maxLength: 200, unit: 'binary' }),
    fc.string({ minLength: 8, maxLength: 60, unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_') }),
  )
  .filter((k) => k.length >= 1 && k.length <= 200);

const registry = SchemaRegistry.shared();
const catalogue = new Catalogue(registry);
const values = {
  chatModel: catalogue.ofKind('text')[0]!.id,
  imageModel: catalogue.ofKind('image')[0]!.id,
  videoModel: catalogue.ofKind('video')[0]!.id,
  voiceId: catalogue.voices[0]!.id,
  cloudVoice: catalogue.ofKind('cloud-speech')[0]!.id,
  ttsModel: catalogue.ofKind('voice')[0]!.id,
  imageUrl: 'https://example.com/image.png',
};
// Every way the key is sent (the auth and near-miss cases of GET /v1/me and chat), a limit case, and a should case.
const CASES: Case[] = selectCases(loadSuite(registry, values).cases, {
  profile: 'documented',
  only: ['*.me', 'auth.*.chat', 'chat.temperature.above-maximum', 'tts.voice_id.pattern-mismatch'],
  skip: [],
  skipBillable: false,
}).cases.map((c) => ({ ...c, expect: { ...c.expect, checks: checksFor(c, 'documented') } }));

let server: Server;
let url = '';

/**
 * A target that answers every request with the request itself (its line and headers, the key among them), as a
 * misconfigured gateway's error page or debug endpoint does: 200 on GET /v1/me and for the should case, 400 on a chat
 * request, 429 for the Basic scheme on chat (so a case is inconclusive). No Date header: two runs answer alike.
 */
function echo(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void {
  req.resume();
  req.on('end', () => {
    res.sendDate = false;
    const auth = String(req.headers.authorization ?? '');
    const chat = req.url!.startsWith('/text-provider/chat');
    const status = chat && auth.startsWith('Basic') ? 429 : chat ? 400 : 200;
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-echo-url': req.url! };
    if (status === 429) headers['retry-after'] = '0';
    res.writeHead(status, headers);
    res.end(JSON.stringify({ echo: { url: req.url, headers: req.headers } }));
  });
}

const REPORTERS: Record<string, () => Reporter> = {
  json: jsonReporter,
  junit: junitReporter,
  tap: tapReporter,
  html: htmlReporter,
};

/** Every reporter's output for a run with this key; times set to 0, so that two runs differ only by the key. */
async function reports(key: string): Promise<{ results: CaseResult[]; outputs: Record<string, string> }> {
  const results = (
    await runSuite(CASES, {
      baseUrl: url,
      apiKey: key,
      pathPrefix: '',
      timeoutMs: 5_000,
      unknownKey: 'sk-conformance-unknown-key',
      registry,
      concurrency: 4,
      retries: 0,
      maxRetryWaitMs: 0,
      faultHeaders: false,
      unsupported: new Set(),
      imageModel: values.imageModel,
      shouldWarns: true,
      mediaAllowPrivate: true,
      headers: { 'x-gateway-api-key': key },
      headerSecrets: [key],
    })
  ).map((r) => ({ ...r, ms: 0 }));
  const report: Report = {
    info: { target: url, profile: 'documented', faultHeaders: false, cases: CASES },
    results,
    summary: { ...summarize(results, 0) },
  };
  const outputs: Record<string, string> = {};
  for (const [name, make] of Object.entries(REPORTERS)) outputs[name] = make().end(report);
  let pretty = '';
  const p = prettyReporter((t) => void (pretty += t));
  p.start!(report.info);
  results.forEach((r, i) => p.result!(r, i + 1, results.length));
  outputs.pretty = pretty + p.end(report);
  return { results, outputs };
}

/** Every text of a JSON value (keys and strings), decoded. */
function jsonTexts(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) jsonTexts(v, out);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      jsonTexts(v, out);
    }
  return out;
}

const HTML_DATA = /<script type="application\/json" id="report-data">([^<]*)<\/script>/;

/**
 * What a reader of each report sees, decoded: the values of the parsed JSON, the attribute values and texts of the
 * parsed XML, the TAP text and its YAML diagnostics, the HTML page's markup and its embedded data, the console text.
 */
function readable(name: string, text: string): string {
  switch (name) {
    case 'json':
      return jsonTexts(JSON.parse(text)).join('\u0000');
    case 'junit':
      return jsonTexts(
        new XMLParser({
          ignoreAttributes: false,
          processEntities: true,
          htmlEntities: false,
          parseTagValue: false,
        }).parse(text),
      ).join('\u0000');
    case 'tap':
      return [text, ...parseTap(text).points.flatMap((p) => jsonTexts(p.diag ?? {}))].join('\u0000');
    case 'html':
      return [text.replace(HTML_DATA, ''), ...jsonTexts(JSON.parse(HTML_DATA.exec(text)![1]!))].join('\u0000');
    default:
      return text;
  }
}

const count = (text: string, part: string): number => text.split(part).length - 1;

/** The checks every key's reports must pass: each parses with its parser and has every case, in order. */
function assertParses(results: readonly CaseResult[], outputs: Record<string, string>): void {
  const ids = results.map((r) => r.case.id);
  const doc = JSON.parse(outputs.json!) as { cases: { id: string }[] };
  assert.equal(jsonReportProblems(doc), [], 'the JSON report matches its schema');
  assert.equal(
    doc.cases.map((c) => c.id),
    ids,
  );
  const problems = junitProblems(outputs.junit!);
  if (problems) assert.equal(problems, [], 'the JUnit report is valid against the JUnit schema');
  assert.equal(
    junitTestcases(outputs.junit!).map((t) => t.name.slice(0, t.name.indexOf(':'))),
    ids,
  );
  const tap = parseTap(outputs.tap!);
  assert.equal(tap.problems, [], 'tap-parser reads the TAP report');
  assert.is(tap.plan?.end, ids.length);
  assert.equal(
    tap.points.map((p) => p.name.split(' - ')[0]),
    ids,
  );
  const html = outputs.html!;
  assert.is(count(html, '</script>'), 2, 'the HTML report ends only its own two script elements');
  const data = HTML_DATA.exec(html);
  assert.ok(data, 'the HTML report embeds its data with no < in it');
  const embedded = JSON.parse(data![1]!) as { cases: { id: string }[] };
  assert.equal(jsonReportProblems(embedded), []);
  assert.equal(
    embedded.cases.map((c) => c.id),
    ids,
  );
  const marks = outputs.pretty!.split('\n').filter((l) => /^[.FW?-]+ \d+\/\d+$/.test(l));
  assert.is(
    marks.map((l) => l.split(' ')[0]!.length).reduce((a, b) => a + b, 0),
    ids.length,
  );
  assert.ok(outputs.pretty!.trimEnd().endsWith(' not applicable'));
}

// The runs every key is compared with: a long and a short key that no generated key's run can be confused with.
const LONG = 'zq-reference-key-0000-zq';
const SHORT = 'zqz';
let long: Record<string, string>;
let short: CaseResult[];

test.before(async () => {
  server = createServer(echo);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const l = await reports(LONG);
  long = Object.fromEntries(Object.entries(l.outputs).map(([name, text]) => [name, readable(name, text)]));
  short = (await reports(SHORT)).results;
});

test.after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('the reference runs: the key echoed and sent every way, every verdict, masked where sent', async () => {
  const { results, outputs } = await reports(LONG);
  assertParses(results, outputs);
  const verdicts = new Set(results.map((r) => r.verdict));
  for (const v of ['pass', 'fail', 'warn', 'inconclusive'] as const) assert.ok(verdicts.has(v), v);
  for (const [name, text] of Object.entries(long)) assert.is(count(text, LONG), 0, name);
  assert.ok(outputs.json!.includes(maskKey(LONG)));
  const shown = results.map((r) => JSON.stringify(r.request));
  for (const where of ['"authorization":"Bearer ***"', '"x-api-key":"***"', 'api_key=***', '"cookie":"api_key=***"'])
    assert.ok(
      short.some((r) => JSON.stringify(r.request).includes(where)),
      where,
    );
  assert.ok(shown.some((s) => s.includes(`"x-gateway-api-key":"${maskKey(LONG)}"`)));
});

test('any key: every report parses and has every case; a long key is never shown, a short one masked where sent', async () => {
  await check('reports of a run with the key', keyArbitrary, async (key) => {
    const { results, outputs } = await reports(key);
    assertParses(results, outputs);
    if (key.length >= 8) {
      // The reports' own words (an element name, a description) may hold the key: it adds no occurrence of its own.
      for (const [name, text] of Object.entries(outputs)) {
        const seen = readable(name, text);
        assert.ok(
          count(seen, key) <= count(long[name]!, key),
          `${name} shows the key ${JSON.stringify(key)}: ${seen.slice(Math.max(0, seen.indexOf(key) - 80), seen.indexOf(key) + key.length + 80)}`,
        );
      }
    } else {
      // Where the key was sent, its mask is shown: the request reads as with any other short key.
      results.forEach((r, i) => {
        if (r.verdict === 'not-applicable' && /no such near miss/.test(r.reason ?? '')) return;
        assert.equal(
          { url: r.request.url, headers: r.request.headers },
          {
            url: short[i]!.request.url,
            headers: short[i]!.request.headers,
          },
        );
      });
    }
  });
});

// Client-check's reporters: a client's command line, output and errors are any text.
const scenarios = loadScenarios(registry);
const CHECK_REPORTERS: Record<string, () => CheckReporter> = { json: checkJsonReporter, junit: checkJunitReporter };
const text = fc.oneof(
  fc.array(piece, { minLength: 1, maxLength: 20 }).map((parts) => parts.join('')),
  fc.string({ maxLength: 300, unit: 'binary' }),
);

test("client-check's reporters: their output parses and has every scenario, whatever the client printed", async () => {
  await check(
    'client-check reports',
    fc.record({ client: text, output: text, error: text, reason: text, expected: text, actual: text }),
    async (t) => {
      const results = scenarios.map((scenario, i) => {
        const verdict = (['pass', 'fail', 'not-applicable'] as const)[i % 3]!;
        return {
          scenario,
          grade: {
            scenario: scenario.id,
            verdict,
            ...(verdict !== 'pass' ? { reason: t.reason } : {}),
            failures: verdict === 'fail' ? [{ check: 'attempts', expected: t.expected, actual: t.actual }] : [],
            attempts: [],
            requests: 0,
            ...(verdict === 'not-applicable'
              ? {}
              : { outcome: { exitCode: 1, ms: 5, output: t.output, ...(i % 2 ? { error: t.error } : {}) } }),
          },
        };
      });
      const report: CheckReport = {
        info: { client: t.client, scenarios },
        results,
        summary: { total: results.length, passed: 0, failed: 0, notApplicable: 0, ms: 0 },
      };
      const ids = scenarios.map((s) => s.id);
      const json = JSON.parse(CHECK_REPORTERS.json!().end(report)) as { scenarios: { id: string }[] };
      assert.equal(
        json.scenarios.map((s) => s.id),
        ids,
      );
      const junit = CHECK_REPORTERS.junit!().end(report);
      const problems = junitProblems(junit);
      if (problems) assert.equal(problems, [], 'the JUnit report is valid against the JUnit schema');
      assert.equal(
        junitTestcases(junit).map((c) => c.name.slice(0, c.name.indexOf(':'))),
        ids,
      );
      let pretty = '';
      const p = checkPrettyReporter((s) => void (pretty += s));
      p.start!(report.info);
      results.forEach((r, i) => p.result!(r, i + 1, results.length));
      pretty += p.end(report);
      for (const id of ids) assert.ok(pretty.includes(`  ${id}`), id);
    },
  );
});

test.run();
