// The gateway profile's pure parts, without a socket: its case table, the timing of a stream's events, and each judge
// on observations written here (what the client got, what the upstream's journal holds).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { operation } from '../../../src/contract/operations.js';
import { SchemaRegistry } from '../../../src/contract/schemas.js';
import { Catalogue } from '../../../src/domain/catalogue.js';
import type { EntryJson } from '../../../src/domain/journal/journal.js';
import { operationBases, type SuiteValues } from '../../../src/tools/conformance/suite.js';
import { gatewayCases, TEXT_FIELDS, textOf, type GatewayCase } from '../../../src/tools/gateway/cases.js';
import { JUDGES } from '../../../src/tools/gateway/judge.js';
import type { JudgeContext } from '../../../src/tools/gateway/judging.js';
import type { Observation, Sent } from '../../../src/tools/gateway/probe.js';
import { clientEvents, milestones, streamText } from '../../../src/tools/gateway/stream.js';
import type { Exchange } from '../../../src/verdict/types.js';
import { exchangeOf } from '../../support/index.js';

const test = suite('conformance --profile gateway: the case table, stream timing and the judges');

const registry = SchemaRegistry.shared();
const catalogue = new Catalogue(registry);
const VALUES: SuiteValues = {
  chatModel: 'gpt-4o-mini',
  imageModel: 'dall-e-3',
  videoModel: 'gen4_turbo',
  voiceId: catalogue.voices[0]!.id,
  cloudVoice: 'en-US-JennyNeural',
  ttsModel: 'eleven_multilingual_v2',
  imageUrl: 'https://example.com/image.png',
};
const { cases, probes } = gatewayCases({
  bases: operationBases(registry, VALUES),
  values: VALUES,
  run: 'abc123',
  streams: 3,
});
const byId = (id: string): GatewayCase => cases.find((c) => c.case.id === id)!;

const CLIENT_KEY = 'sk-gw-client-0123456789';
const CTX: JudgeContext = {
  registry,
  clientKey: CLIENT_KEY,
  upstreamKeys: ['sk-mock-default'],
  keyPassthrough: false,
  modelAliases: {},
  rewrites: [],
  firstEventBoundMs: 500,
  gatewayTimeoutMs: 2000,
  upstreamBody: async () => undefined,
};

/** A journal entry with the fields a judge reads; the rest as the mock writes them. */
function entry(e: Partial<EntryJson> & { body?: unknown; events?: [number, string][] }): EntryJson {
  const { body, events, ...rest } = e;
  return {
    requestId: 'req_1',
    time: 10_000,
    method: 'POST',
    path: '/text-provider/chat/completions',
    operation: 'chat.completions',
    keyLabel: 'sk...lt',
    status: 200,
    latencyMs: 100,
    errorCode: null,
    details: undefined,
    fault: undefined,
    stream: undefined,
    retryCount: undefined,
    model: 'gpt-4o-mini',
    request: {
      headers: { authorization: 'Bearer sk...lt' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    },
    ...(events ? { sse: { events: events.map(([ms, data]) => ({ ms, data })), total: events.length } } : {}),
    ...rest,
  } as unknown as EntryJson;
}

/** An observation of a case's first probe: its first request as sent, what the client got and the upstream saw. */
function observed(gc: GatewayCase, ex: Exchange, upstream: EntryJson[], more: Partial<Sent> = {}): Observation[] {
  const probe = probes.get(gc.probes[0]!)!;
  return [
    {
      key: probe.key,
      sent: [{ request: probe.requests[0]!, sentAt: 9_900, ex, waitMs: 3_000, waitedOut: false, upstream, ...more }],
    },
  ];
}

const judge = (gc: GatewayCase, obs: Observation[], ctx: JudgeContext = CTX) => JUDGES[gc.judge](gc, obs, ctx);

/** An event's data line. */
const chunk = (content?: string, finish?: string) =>
  JSON.stringify({
    id: 'c',
    choices: [{ index: 0, delta: content === undefined ? {} : { content }, finish_reason: finish ?? null }],
  });
const sse = (...data: string[]) => data.map((d) => `data: ${d}\n\n`).join('');

test('the case table: unique ids, probes for every case, one token per request, valid bodies marked at their text field', () => {
  const ids = cases.map((c) => c.case.id);
  assert.is(new Set(ids).size, ids.length);
  for (const gc of cases) for (const k of gc.probes) assert.ok(probes.has(k), `${gc.case.id}: probe ${k}`);
  const requests = [...probes.values()].flatMap((p) => p.requests);
  assert.is(new Set(requests.map((r) => r.token)).size, requests.length);
  for (const r of requests) {
    assert.is(textOf(r.operation, r.body), r.text);
    assert.ok(r.text.startsWith(`${r.token} `), r.text);
    assert.ok(TEXT_FIELDS[r.operation]);
    const op = operation(r.operation);
    const problems = registry.check(op.requestSchema!, r.body);
    // Only the out-of-range cases send a body the API document refuses.
    const outside = /^forward:chat\.(temperature|top_p)$/.test(
      [...probes.values()].find((p) => p.requests.includes(r))!.key,
    );
    assert.is(problems.length > 0, outside, `${r.token}: ${JSON.stringify(problems)}`);
  }
  // Every operation with a request body, and every family.
  for (const s of ['chat', 'images', 'edit', 'video', 'tts', 'speech'])
    for (const kind of ['forward', 'answer', 'error.%.400', 'error.%.429', 'error.%.retry-after', 'error.%.malformed'])
      assert.ok(ids.includes(`gateway.${kind.includes('%') ? kind.replace('%', s) : `${kind}.${s}`}`), `${kind} ${s}`);
  assert.ok(cases.every((c) => c.case.profile === 'gateway' && !c.case.billable));
  // A chat's token is in its last message, where a gateway's own system prompt cannot move it.
  const forward = probes.get('forward:chat')!.requests[0]!;
  const messages = forward.body.messages as { role: string; content: string }[];
  assert.is(messages[0]!.role, 'system');
  assert.is(messages[messages.length - 1]!.content, forward.text);
});

test('clientEvents times each event by the read that completed it; milestones match a re-chunked stream by its content', () => {
  const text = sse(chunk(''), chunk('Hel'), chunk('lo'), chunk(undefined, 'stop'), '[DONE]');
  const cut = text.indexOf('data:', text.indexOf('lo'));
  const ex = exchangeOf({ text, reads: [cut - 3, 3, text.length - cut], readMs: [10, 400, 900] });
  const events = clientEvents(ex);
  assert.equal(
    events.map((e) => e.ms),
    [10, 10, 400, 900, 900],
  );
  assert.equal(streamText(events), {
    content: 'Hello',
    finishes: ['stop'],
    done: true,
    progress: [0, 3, 5, 5, 5],
  });
  // The upstream sent "Hello" in one chunk: matched to the client's second content event.
  const upstream = [
    { data: chunk(''), ms: 0 },
    { data: chunk('Hello'), ms: 300 },
    { data: chunk(undefined, 'stop'), ms: 800 },
    { data: '[DONE]', ms: 801 },
  ];
  const points = milestones(upstream, events, { upstream: 1000, client: 1000 })!;
  assert.equal(
    points.map((p) => [p.what, p.upstream - 1000, p.client - 1000]),
    [
      ['the first event', 0, 10],
      ['the content up to character 5', 300, 400],
      ['the finish_reason', 800, 900],
      ['data: [DONE]', 801, 900],
    ],
  );
  assert.is(milestones([{ data: chunk('Other'), ms: 0 }], events, { upstream: 0, client: 0 }), undefined);
});

test('forward: a parameter changed on the way fails, naming it; a documented alias or rewrite passes', async () => {
  const gc = byId('gateway.forward.chat');
  const sent = probes.get('forward:chat')!.requests[0]!.body;
  const ok = exchangeOf({ json: { choices: [] } });
  assert.equal((await judge(gc, observed(gc, ok, [entry({ body: sent })]))).failures, []);
  const clamped = await judge(gc, observed(gc, ok, [entry({ body: { ...sent, temperature: 1 } })]));
  assert.equal(
    clamped.failures.map((f) => f.check),
    ['forwarded'],
  );
  assert.match(clamped.failures[0]!.actual, /^temperature: sent 1\.7, the upstream got 1$/);
  const aliased = { ...sent, model: 'upstream-model' };
  assert.is((await judge(gc, observed(gc, ok, [entry({ body: aliased })]))).failures.length, 1);
  const withAlias = { ...CTX, modelAliases: { 'gpt-4o-mini': 'upstream-model' } };
  assert.equal((await judge(gc, observed(gc, ok, [entry({ body: aliased })]), withAlias)).failures, []);
  const withRewrite = { ...CTX, rewrites: ['temperature'] };
  assert.equal(
    (await judge(gc, observed(gc, ok, [entry({ body: { ...sent, temperature: 1 } })]), withRewrite)).failures,
    [],
  );
  // Nothing at the upstream, or the upstream's success turned into an error.
  const none = await judge(gc, observed(gc, exchangeOf({ status: 404, json: { error: 'no route' } }), []));
  assert.match(none.failures[0]!.actual, /never reached the upstream; the client got status 404/);
  const turned = await judge(gc, observed(gc, exchangeOf({ status: 500, json: {} }), [entry({ body: sent })]));
  assert.equal(
    turned.failures.map((f) => [f.check, f.expected]),
    [['status', 'status 200, as the upstream answered']],
  );
});

test('errors: the statuses a case accepts, retry-after kept, and why a case cannot judge', async () => {
  const e401 = byId('gateway.error.chat.401');
  const up = [entry({ status: 401 })];
  assert.equal((await judge(e401, observed(e401, exchangeOf({ status: 502, json: {} }), up))).failures, []);
  assert.equal((await judge(e401, observed(e401, exchangeOf({ status: 401, json: {} }), up))).failures, []);
  const hidden = await judge(e401, observed(e401, exchangeOf({ status: 200, json: {} }), up));
  assert.match(hidden.failures[0]!.expected, /^status 401 or a 5xx \(the upstream answered 401 \(1 attempt\)\)$/);
  const e503 = byId('gateway.error.chat.503');
  for (const [status, fails] of [
    [502, 0],
    [429, 0],
    [400, 1],
    [200, 1],
  ] as const)
    assert.is(
      (await judge(e503, observed(e503, exchangeOf({ status, json: {} }), [entry({ status: 503 })]))).failures.length,
      fails,
      String(status),
    );
  const e429 = byId('gateway.error.chat.429');
  assert.is(
    (await judge(e429, observed(e429, exchangeOf({ status: 503, json: {} }), [entry({ status: 429 })]))).failures
      .length,
    1,
  );
  const unreached = await judge(e429, observed(e429, exchangeOf({ status: 429, json: {} }), []));
  assert.is(unreached.verdict, 'inconclusive');
  const after = byId('gateway.error.chat.retry-after');
  const limited = entry({ status: 429, responseHeaders: { 'retry-after': '1' } });
  const obs = (headers: Record<string, string>) => [
    ...observed(
      after,
      exchangeOf({ status: 429, json: {}, headers: { 'content-type': 'application/json', ...headers } }),
      [limited],
    ),
    ...observed(
      after,
      exchangeOf({ status: 503, json: {}, headers: { 'content-type': 'application/json', ...headers } }),
      [entry({ status: 503, responseHeaders: { 'Retry-After': '1' } })],
    ),
  ];
  assert.equal((await judge(after, obs({ 'retry-after': '1' }))).failures, []);
  const dropped = await judge(after, obs({}));
  assert.match(
    dropped.failures[0]!.actual,
    /the upstream's 429 said retry-after: 1; the client's 429 had none; the upstream's 503/,
  );
});

test('malformed: a 5xx in the envelope, or the upstream bytes unchanged; a repaired 200 fails', async () => {
  const gc = byId('gateway.error.chat.malformed');
  const broken = '{"id":"chatcmpl-1","choices":[{"ind';
  const up = [entry({ responseBody: broken, responseBodyChars: broken.length })];
  const envelope = { error: { message: 'bad upstream', type: 'server_error', param: null, code: null } };
  assert.equal((await judge(gc, observed(gc, exchangeOf({ status: 502, json: envelope }), up))).failures, []);
  // A gateway's own error needs the message only.
  const own = exchangeOf({ status: 502, json: { error: { message: 'upstream sent invalid JSON' } } });
  assert.equal((await judge(gc, observed(gc, own, up))).failures, []);
  const bare = await judge(gc, observed(gc, exchangeOf({ status: 500, json: { status: 'failure' } }), up));
  assert.equal(
    bare.failures.map((f) => f.check),
    ['error-envelope'],
  );
  const relayed = exchangeOf({ status: 200, text: broken, headers: { 'content-type': 'application/json' } });
  assert.equal((await judge(gc, observed(gc, relayed, up))).failures, []);
  const repaired = exchangeOf({ status: 200, json: { choices: [] } });
  assert.equal(
    (await judge(gc, observed(gc, repaired, up))).failures.map((f) => f.check),
    ['status'],
  );
});

test('streams: the first event held fails (buffered), pacing is then not judged; a faked [DONE] after a cut fails', async () => {
  const first = byId('gateway.stream.first-event');
  const pacing = byId('gateway.stream.pacing');
  const upEvents: [number, string][] = [
    [0, chunk('')],
    [0, chunk('Hi')],
    [1000, chunk(' there')],
    [2000, chunk(undefined, 'length')],
    [2000, '[DONE]'],
  ];
  // The upstream request arrived at 9,950 (time - latency) and the client sent at 9,900 (observed()).
  const up = [entry({ time: 12_000, latencyMs: 2_050, events: upEvents })];
  const text = sse(...upEvents.map(([, d]) => d));
  // One read per event, at these times (ms from the client's request).
  const timed = (readMs: number[]) =>
    exchangeOf({
      text,
      reads: upEvents.map(([, d]) => `data: ${d}\n\n`.length),
      readMs,
      ms: readMs[readMs.length - 1]!,
    });
  const steady = observed(first, timed([60, 60, 1060, 2060, 2060]), up);
  assert.equal((await judge(first, steady)).failures, []);
  assert.match(
    (await judge(first, steady)).reason!,
    /the client read the first 10 ms after the upstream wrote it \(bound 500 ms\)/,
  );
  const buffered = observed(first, timed([2060, 2060, 2060, 2061, 2062]), up);
  const held = await judge(first, buffered);
  assert.match(
    held.failures[0]!.actual,
    /read the first 2010 ms after the upstream wrote it .*: after the upstream had written the whole stream \(buffered\)/,
  );
  assert.is((await judge(pacing, buffered)).verdict, 'inconclusive');
  // Events held back in a batch after a prompt first event: the pacing case's finding.
  const batched = await judge(pacing, observed(pacing, timed([60, 60, 2060, 2060, 2061]), up));
  assert.match(
    batched.failures[0]!.actual,
    /^the content up to character 8 reached the client 1010 ms after the upstream wrote it/,
  );

  const cut = byId('gateway.stream.cut');
  const cutUp = [entry({ stream: 'cut', events: upEvents.slice(0, 3) })];
  const faked = await judge(
    cut,
    observed(cut, exchangeOf({ text: sse(...upEvents.slice(0, 3).map(([, d]) => d), '[DONE]') }), cutUp),
  );
  assert.match(faked.failures[0]!.actual, /^data: \[DONE\] after 3 events, as if complete/);
  const broken = exchangeOf({
    text: sse(chunk('')),
    error: 'UND_ERR_SOCKET (other side closed) after the response headers',
  });
  assert.equal((await judge(cut, observed(cut, broken, cutUp))).failures, []);
  const open = await judge(cut, observed(cut, exchangeOf({ text: sse(chunk('')) }), cutUp, { waitedOut: true }));
  assert.match(open.failures[0]!.actual, /still open 3000 ms after the request/);
});

test('isolation names the stream whose text another carried; the hung upstream fails a client left waiting', async () => {
  const gc = byId('gateway.stream.isolation');
  const requests = probes.get('stream:isolation')!.requests;
  const up = requests.map((r, i) =>
    entry({
      time: 11_000 + i,
      latencyMs: 1_000,
      events: [
        [0, chunk(`About ${r.token}`)],
        [5, '[DONE]'],
      ],
    }),
  );
  const ok = requests.map((r, i) => ({
    request: r,
    sentAt: 9_900,
    ex: exchangeOf({ text: sse(chunk(`About ${r.token}`), '[DONE]') }),
    waitMs: 3_000,
    waitedOut: false,
    upstream: [up[i]!],
  }));
  assert.match(
    (await judge(gc, [{ key: 'stream:isolation', sent: ok }])).reason!,
    /^3 streams ran together for 998 ms/,
  );
  const mixed = ok.map((s, i) =>
    i === 0 ? { ...s, ex: exchangeOf({ text: sse(chunk(`About ${requests[2]!.token}`), '[DONE]') }) } : s,
  );
  const found = await judge(gc, [{ key: 'stream:isolation', sent: mixed }]);
  assert.match(found.failures[0]!.actual, /^stream 1 carried the text of stream 3/);

  const hung = byId('gateway.timeout.hung-upstream');
  const [head, mid] = probes.get('timeout')!.requests;
  const wait = { waitMs: 3_000, sentAt: 9_900, upstream: [], matched: 1 };
  const gone = {
    status: 0,
    headers: {},
    body: Buffer.alloc(0),
    ms: 3_000,
    error: 'no answer within the 3000 ms timeout',
  };
  const failedWait = await judge(hung, [
    {
      key: 'timeout',
      sent: [
        { ...wait, request: head!, ex: gone, waitedOut: true },
        {
          ...wait,
          request: mid!,
          ex: exchangeOf({ text: sse(chunk('')), error: 'terminated', ms: 2_100 }),
          waitedOut: false,
        },
      ],
    },
  ]);
  assert.match(
    failedWait.failures[0]!.actual,
    /^before its answer: the client had no answer 3000 ms after the request; mid-stream: the stream ended after 2100 ms \(terminated\)$/,
  );
});

test('retries: attempts counted from the journal, the waits between them against retry-after and the least backoff', async () => {
  const after = byId('gateway.retries.retry-after');
  const attempt = (arrived: number, status: number, extra: Partial<EntryJson> = {}) =>
    entry({ time: arrived + 5, latencyMs: 5, status, ...extra });
  const respected = await judge(
    after,
    observed(after, exchangeOf({ json: {} }), [attempt(1000, 503, { retryAfterMs: 1000 }), attempt(2010, 200)]),
  );
  assert.equal(respected.failures, []);
  assert.match(respected.reason!, /retried 1 time, the first 1005 ms after the upstream's 503 with retry-after 1 s/);
  const early = await judge(
    after,
    observed(after, exchangeOf({ json: {} }), [attempt(1000, 503, { retryAfterMs: 1000 }), attempt(1100, 200)]),
  );
  assert.is(early.failures.length, 1);
  assert.match(
    (await judge(after, observed(after, exchangeOf({ status: 503, json: {} }), [attempt(1000, 503)]))).reason!,
    /did not retry/,
  );
  const backoff = byId('gateway.retries.backoff');
  const atOnce = await judge(
    backoff,
    observed(backoff, exchangeOf({ json: {} }), [attempt(1000, 500), attempt(1006, 500), attempt(1012, 200)]),
  );
  assert.match(atOnce.failures[0]!.actual, /^retried 2 times, after 1, 1 ms$/);
  const patient = await judge(
    backoff,
    observed(backoff, exchangeOf({ json: {} }), [attempt(1000, 500), attempt(1300, 500), attempt(2000, 200)]),
  );
  assert.equal(patient.failures, []);
});

test("secrets: the client's key at the upstream fails, by its journal's mask or raw; a passthrough or a shared key does not apply", async () => {
  const gc = byId('gateway.secrets.key');
  const ok = exchangeOf({ json: {} });
  assert.equal((await judge(gc, observed(gc, ok, [entry({ keyLabel: 'sk...lt' })]))).failures, []);
  const forwarded = await judge(gc, observed(gc, ok, [entry({ keyLabel: 'sk-g...6789' })]));
  assert.match(
    forwarded.failures[0]!.actual,
    /the upstream got the client's key \(its journal shows it masked, sk-g\.\.\.6789\) in authorization/,
  );
  const raw = entry({ keyLabel: undefined, status: 401, request: { headers: { 'x-client-key': CLIENT_KEY } } });
  assert.match((await judge(gc, observed(gc, ok, [raw]))).failures[0]!.actual, /in x-client-key/);
  const refused = entry({ keyLabel: undefined, status: 401, request: { headers: { authorization: '[masked]' } } });
  assert.is((await judge(gc, observed(gc, ok, [refused]))).verdict, 'inconclusive');
  // Two keys whose masks are alike cannot be told apart in the journal.
  const alike = { ...CTX, clientKey: 'sk-mock-1234567890-abcd', upstreamKeys: ['sk-mock-0000000000-abcd'] };
  assert.is((await judge(gc, observed(gc, ok, [entry({ keyLabel: 'sk-m...abcd' })]), alike)).verdict, 'inconclusive');
  assert.is((await judge(gc, observed(gc, ok, []), { ...CTX, keyPassthrough: true })).verdict, 'not-applicable');
  assert.is((await judge(gc, observed(gc, ok, []), { ...CTX, upstreamKeys: [CLIENT_KEY] })).verdict, 'not-applicable');
});

test.run();
