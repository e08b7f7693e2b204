// Property tests from the request schemas: valid bodies get a 200 whose body matches the response
// schema; broken bodies get a 400 in the error envelope, never a 5xx or a hang.
// Runs per operation: PROPERTY_RUNS (default 1000 valid + 1000 broken). A failure prints its seed and
// path; replay it with PROPERTY_SEED=<seed> PROPERTY_PATH=<path>.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { operation } from '../../src/contract/operations.js';
import { schemaId, strictId } from '../../src/contract/schemas.js';
import { assertSchema, request, schemas, useMock, type Res } from '../support/index.js';
import { mutatedArbitrary } from './mutations.js';
import { BODY_SPECS, requestSchema } from './operationBodies.js';

const RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);
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
      `${name}\n${report}\n${String(details.errorInstance)}\nReplay: PROPERTY_SEED=${details.seed} PROPERTY_PATH=${details.counterexamplePath} node --import tsx test/run.ts test/property`,
    );
  }
}

const lenient = useMock(test);
const strict = useMock(test, { strict: true });

/** Sends a body; a server that has not answered within 10 s fails the property (a hang). */
function send(url: string, id: string, text: string): Promise<Res> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${id}: no answer within 10 s`)), 10_000)),
  );
  return Promise.race([request(url, operation(id).path, { method: 'POST', raw: text }), hang]).finally(() =>
    clearTimeout(timer),
  );
}

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
function assertCommon(res: Res): void {
  assert.match(String(res.headers['x-request-id']), SAFE_ID);
  assert.is(res.headers['x-content-type-options'], 'nosniff');
}

/** A 200 whose body is what the operation promises: JSON matching its schema, an SSE stream, or audio bytes. */
function assertSuccess(id: string, body: Record<string, unknown>, res: Res): void {
  if (res.status !== 200) throw new Error(`${id}: expected 200, got ${res.status}: ${res.text.slice(0, 400)}`);
  assertCommon(res);
  const { success } = operation(id);
  const type = String(res.headers['content-type']);
  if (body.stream === true) {
    assert.match(type, /^text\/event-stream/);
    const events = res.text.split('\n\n').filter(Boolean);
    assert.is(events.at(-1), 'data: [DONE]');
    for (const e of events.slice(0, -1))
      assertSchema('chat-completion-chunk.json', JSON.parse(e.replace(/^data: /, '')));
    return;
  }
  assert.ok(type.startsWith(success.contentType), `${id}: content-type ${type}`);
  if (success.schema) assertSchema(success.schema, res.json);
  else if (success.contentType === 'audio/wav') assert.is(res.bytes.toString('latin1', 8, 12), 'WAVE');
  else
    assert.ok(
      res.bytes.length > 0 &&
        (res.bytes.toString('latin1', 0, 3) === 'ID3' || (res.bytes[0] === 0xff && (res.bytes[1]! & 0xe0) === 0xe0)),
      'not an MP3',
    );
}

/** A 400 in the error envelope. */
function assertRejected(res: Res, what: string): void {
  if (res.status !== 400) throw new Error(`${what}: expected 400, got ${res.status}: ${res.text.slice(0, 400)}`);
  assertCommon(res);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assertSchema('error.json', res.json);
}

const rejects = (file: string) => (body: unknown, useStrict: boolean) =>
  schemas().check(useStrict ? strictId(schemaId(file)) : schemaId(file), body).length > 0;

for (const spec of BODY_SPECS) {
  test(`${spec.id}: valid bodies get a 200 with a body matching the response schema`, async () => {
    await check(`${spec.id} valid`, spec.valid, async (body) =>
      assertSuccess(spec.id, body, await send(lenient().url, spec.id, JSON.stringify(body))),
    );
  });

  test(`${spec.id}: broken bodies get a 400 envelope (unknown fields: under --strict)`, async () => {
    const broken = mutatedArbitrary(requestSchema(spec.schemaFile), spec.valid, rejects(spec.schemaFile));
    await check(`${spec.id} broken`, broken, async (m) => {
      const what = `${spec.id} ${m.kind} at ${m.path}`;
      const res = await send(lenient().url, spec.id, m.text);
      if (m.lenientRejects) return assertRejected(res, what);
      assertSuccess(spec.id, JSON.parse(m.text) as Record<string, unknown>, res);
      assertRejected(await send(strict().url, spec.id, m.text), `${what} (strict)`);
    });
  });
}

test('no request pollutes Object.prototype', () => {
  assert.is((Object.prototype as Record<string, unknown>).polluted, undefined);
  assert.is(({} as Record<string, unknown>).toString, Object.prototype.toString);
});

test.run();
