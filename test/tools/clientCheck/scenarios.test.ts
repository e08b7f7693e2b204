// The scenario files of client-check/: valid, named after their ids, documented, and each one's mock
// configuration one the mock accepts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApp } from '../../../src/app/createApp.js';
import { SchemaRegistry } from '../../../src/contract/schemas.js';
import { ROOT } from '../../../src/lib/paths.js';
import { CLIENT_KEY, deadlineOf, scenarioConfig } from '../../../src/tools/clientCheck/run.js';
import {
  checkScenario,
  loadScenarios,
  scenarioById,
  ScenarioError,
  selectScenarios,
  type Scenario,
} from '../../../src/tools/clientCheck/scenarios.js';

const registry = SchemaRegistry.shared();
const all = loadScenarios(registry);
const TAGS = ['retry', 'no-retry', 'connection', 'stream', 'timeout', 'concurrency', 'body'];

function throws(fn: () => unknown, message: RegExp): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, ScenarioError);
    assert.match((err as Error).message, message);
    return;
  }
  assert.unreachable('should have thrown');
}

test('the suite: every scenario the issue asks for, each tagged, each with its checks', () => {
  assert.equal(
    all.map((s) => s.id),
    [
      'answer-timeout',
      'bad-request-400',
      'connection-reset',
      'empty-close',
      'first-token-timeout',
      'rate-limit-storm',
      'rate-limited-429',
      'same-body-on-retry',
      'server-errors-backoff',
      'should-retry-false',
      'stream-cut',
      'unauthorized-401',
    ],
  );
  for (const s of all) {
    assert.ok(s.tags?.length, `${s.id} has tags`);
    for (const tag of s.tags!) assert.ok(TAGS.includes(tag), `${s.id}: tag ${tag} is one of the documented tags`);
  }
});

test('docs/client-check.md has a section for each scenario, and the help names every tag', async () => {
  const doc = readFileSync(join(ROOT, 'docs', 'client-check.md'), 'utf8');
  for (const s of all)
    assert.match(doc, new RegExp(`^### \`${s.id}\``, 'm'), `docs/client-check.md: a "### \`${s.id}\`" section`);
  const { clientCheckHelp } = await import('../../../src/tools/clientCheck/cli.js');
  for (const tag of TAGS) assert.ok(clientCheckHelp().includes(tag), `the help names the tag ${tag}`);
});

test("each scenario's mock configuration starts a mock: the key, the rules, the hold", () => {
  for (const s of all) {
    const config = scenarioConfig(s, { clientTimeoutMs: 1000 });
    const app = createApp(config, { report: () => {} });
    assert.is(app.config.keys[0]!.key, CLIENT_KEY);
    assert.is(app.config.faultHeaders, false);
    assert.equal(app.config.keys[0]!.rateLimit, s.mock.rateLimit, s.id);
  }
  const byId = (id: string) => all.find((s) => s.id === id)!;
  const firstToken = scenarioConfig(byId('first-token-timeout'), { clientTimeoutMs: 1000 });
  assert.equal(firstToken.pacing, { timeToFirstTokenMs: 4000, tokensPerSecond: 0 });
  // A first token held past a client timeout of minutes: the stream time limit is raised with it.
  const longFirst = scenarioConfig(byId('first-token-timeout'), { clientTimeoutMs: 300_000 });
  assert.ok(
    createApp(longFirst, { report: () => {} }).config.timeouts.streamMaxMs > longFirst.pacing!.timeToFirstTokenMs!,
  );
  const answer = scenarioConfig(byId('answer-timeout'), { clientTimeoutMs: 120_000 });
  assert.equal(answer.faultRules!.at(-1), {
    id: 'hold-answer',
    match: { operation: 'chat.completions' },
    fault: { delayMs: 123_000 },
  });
  assert.is(answer.timeouts!.stallMaxMs, 124_000, 'a delay may last as long as the hold');
  // A held answer may be held on every attempt the scenario allows.
  assert.is(deadlineOf(byId('answer-timeout'), { clientTimeoutMs: 1000 }), 20_000 + 5 * 4000);
  assert.is(deadlineOf(byId('bad-request-400'), {}), 20_000);
  // The caller's settings come along; the scenario's own win.
  const based = scenarioConfig(
    byId('bad-request-400'),
    {},
    { clock: 5, faultHeaders: true, pacing: { timeToFirstTokenMs: 9 } },
  );
  assert.is(based.clock, 5);
  assert.is(based.faultHeaders, false);
  assert.equal(based.pacing, { timeToFirstTokenMs: 0, tokensPerSecond: 0 });
});

test('a scenario that breaks the schema, or its own bounds, is refused with the file and field named', () => {
  const good: Scenario = all[0]!;
  throws(
    () => checkScenario(registry, { ...good, expect: {} }, 'x.json'),
    /x\.json: not a valid client-check scenario:\n {2}expect: Invalid value/,
  );
  throws(
    () => checkScenario(registry, { ...good, mock: { faultRules: [{ fault: { explode: true } }] } }, 'y.json'),
    /y\.json: not a valid client-check scenario:\n {2}mock\.faultRules\[0\]\.fault\.explode: /,
  );
  throws(
    () => checkScenario(registry, { ...good, expect: { attempts: { min: 3, max: 2 } } }, 'z.json'),
    /z\.json: expect\.attempts\.min \(3\) is above max \(2\)/,
  );
  throws(
    () => checkScenario(registry, { ...good, needs: ['telepathy'] }, 'n.json'),
    /needs\[0\]: .*expected one of 'stream', 'client-timeout', 'concurrency'/,
  );
});

test('the folder: files named after their ids, readable JSON', () => {
  const dir = mkdtempSync(join(tmpdir(), 'client-check-'));
  try {
    const s = all.find((x) => x.id === 'bad-request-400')!;
    writeFileSync(join(dir, 'bad-request-400.json'), JSON.stringify(s));
    assert.equal(
      loadScenarios(registry, dir).map((x) => x.id),
      ['bad-request-400'],
    );
    writeFileSync(join(dir, 'other-name.json'), JSON.stringify(s));
    throws(
      () => loadScenarios(registry, dir),
      /other-name\.json: the id is 'bad-request-400'; a scenario file is named after its id/,
    );
    rmSync(join(dir, 'other-name.json'));
    writeFileSync(join(dir, 'broken.json'), '{ not json');
    throws(() => loadScenarios(registry, dir), /^broken\.json: /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('selection: by id or tag, in the suite order; a name that matches nothing lists what there is', () => {
  assert.equal(selectScenarios(all, []).length, all.length);
  assert.equal(
    selectScenarios(all, ['stream', 'bad-request-400']).map((s) => s.id),
    ['bad-request-400', 'first-token-timeout', 'stream-cut'],
  );
  throws(
    () => selectScenarios(all, ['stream', 'nope']),
    /no scenario or tag named 'nope'; scenarios: answer-timeout, .*; tags: body, concurrency, connection, no-retry, retry, stream, timeout$/,
  );
  assert.is(scenarioById(registry, 'stream-cut').id, 'stream-cut');
  throws(() => scenarioById(registry, 'nope'), /no client-check scenario 'nope'; there are: answer-timeout, /);
});

test.run();
