import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pacingHeader, pacingOf, PACING_HEADER, type TimeLimit } from '../../src/text/pacing.js';
import { ApiError } from '../../src/contract/errors.js';
import { loadLimits } from '../../src/domain/limits.js';

const BASE = { timeToFirstTokenMs: 0, tokensPerSecond: 0 };
// The time limit the header's ttft may not pass (timeouts.streamMaxMs for a stream, its default).
const LIMIT: TimeLimit = { ms: 120000, name: 'stream time limit' };
// How much of a refused part the 400 quotes (messages.maxPacingPartChars).
const QUOTE = loadLimits().messages.maxPacingPartChars;

/** The pacing of a stream whose request sent `header`, over `base`. */
const pacingFor = (header: string | undefined, base = BASE, limit = LIMIT) =>
  pacingOf(base, pacingHeader(header === undefined ? {} : { [PACING_HEADER]: header }, limit, QUOTE));

/** The refusal of a header, as the 400's message. */
function refusal(value: string, limit = LIMIT): ApiError {
  try {
    pacingHeader({ [PACING_HEADER]: value }, limit, QUOTE);
  } catch (err) {
    assert.instance(err, ApiError, value);
    return err as ApiError;
  }
  throw new Error(`${value} was accepted`);
}

test('no header: the configured pacing', () => {
  const base = { timeToFirstTokenMs: 250, tokensPerSecond: 40 };
  assert.equal(pacingFor(undefined, base), base);
  assert.equal(pacingFor('  ', base), base);
  assert.equal(pacingFor('profile=medium', base), base, 'a profile alone leaves the pacing as configured');
});

test('the header overrides one or both values, in any order and case, with ; or , between them', () => {
  assert.equal(pacingFor('ttft=400; tps=30'), { timeToFirstTokenMs: 400, tokensPerSecond: 30 });
  assert.equal(pacingFor('TPS = 12.5', { timeToFirstTokenMs: 90, tokensPerSecond: 0 }), {
    timeToFirstTokenMs: 90,
    tokensPerSecond: 12.5,
  });
  assert.equal(pacingFor('tps=5;'), { timeToFirstTokenMs: 0, tokensPerSecond: 5 });
  assert.equal(pacingFor('tps=0,ttft=0', { timeToFirstTokenMs: 90, tokensPerSecond: 20 }), BASE);
  assert.equal(pacingHeader({ [PACING_HEADER]: 'profile=large-slow; ttft=900' }, LIMIT, QUOTE), {
    profile: 'large-slow',
    ttft: 900,
  });
});

test('anything else is a 400 invalid_header naming the header and the part that is wrong', () => {
  for (const bad of [
    'fast',
    'ttft=-1',
    'tps=abc',
    'ttft=400; speed=2',
    'ttft=120001',
    'tps=0.5',
    'tps=0.000000000000000001',
    'profile=large-slow; ttft=999999',
  ]) {
    const e = refusal(bad);
    assert.equal([e.status, e.code, e.param], [400, 'invalid_header', PACING_HEADER], bad);
    assert.match(e.message, /ttft=MS; tps=TOKENS_PER_SECOND/);
  }
  // The part refused is quoted, not the header: a valid profile beside it does not hide it.
  assert.match(
    refusal('profile=large-slow; ttft=999999').message,
    /'ttft=999999': ttft is above the stream time limit/,
  );
});

test('a part given twice is a 400 naming it: the last does not silently win', () => {
  for (const [value, part, name] of [
    ['ttft=5;ttft=10', 'ttft=10', 'ttft'],
    ['tps=5, TPS=6', 'TPS=6', 'tps'],
    ['profile=medium; profile=large-slow', 'profile=large-slow', 'profile'],
  ]) {
    const e = refusal(value!);
    assert.equal([e.status, e.code, e.param], [400, 'invalid_header', PACING_HEADER], value);
    assert.ok(e.message.includes(`'${part}': ${name} is given twice`), e.message);
  }
});

test('the bounds: ttft at most the time limit of the answer, tps 0 or at least 1; the message says which', () => {
  assert.equal(pacingFor('ttft=120000; tps=1'), { timeToFirstTokenMs: 120000, tokensPerSecond: 1 });
  assert.equal(pacingFor('ttft=600000', BASE, { ms: 600000, name: 'stream time limit' }), {
    timeToFirstTokenMs: 600000,
    tokensPerSecond: 0,
  });
  assert.equal(pacingFor('tps=100000000'), { timeToFirstTokenMs: 0, tokensPerSecond: 100000000 });
  assert.match(
    refusal('tps=0.000000000000000001').message,
    /'tps=0\.000000000000000001': tps is below 1 \(use 0 for no pacing\)/,
  );
  assert.match(refusal('ttft=99999999999999999999').message, /ttft is above the stream time limit of 120000 ms/);
  // A plain answer's ttft is bounded by its own limit, named as such.
  assert.match(
    refusal('ttft=3001', { ms: 3000, name: 'answer time limit' }).message,
    /'ttft=3001': ttft is above the answer time limit of 3000 ms/,
  );
});

test.run();
