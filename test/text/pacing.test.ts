import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pacingFor, PACING_HEADER } from '../../src/text/pacing.js';
import { ApiError } from '../../src/contract/errors.js';
import { loadLimits } from '../../src/domain/limits.js';

const BASE = { timeToFirstTokenMs: 0, tokensPerSecond: 0 };
// The stream time limit the header's ttft may not pass (timeouts.streamMaxMs, its default).
const LIMIT = 120000;
// How much of a refused part the 400 quotes (messages.maxPacingPartChars).
const QUOTE = loadLimits().messages.maxPacingPartChars;

test('no header: the configured pacing', () => {
  const base = { timeToFirstTokenMs: 250, tokensPerSecond: 40 };
  assert.equal(pacingFor({}, base, LIMIT, QUOTE), base);
  assert.equal(pacingFor({ [PACING_HEADER]: '  ' }, base, LIMIT, QUOTE), base);
});

test('the header overrides one or both values, in any order and case, with ; or , between them', () => {
  assert.equal(pacingFor({ [PACING_HEADER]: 'ttft=400; tps=30' }, BASE, LIMIT, QUOTE), {
    timeToFirstTokenMs: 400,
    tokensPerSecond: 30,
  });
  assert.equal(
    pacingFor({ [PACING_HEADER]: 'TPS = 12.5' }, { timeToFirstTokenMs: 90, tokensPerSecond: 0 }, LIMIT, QUOTE),
    { timeToFirstTokenMs: 90, tokensPerSecond: 12.5 },
  );
  assert.equal(pacingFor({ [PACING_HEADER]: 'tps=5;' }, BASE, LIMIT, QUOTE), {
    timeToFirstTokenMs: 0,
    tokensPerSecond: 5,
  });
  assert.equal(
    pacingFor({ [PACING_HEADER]: 'tps=0,ttft=0' }, { timeToFirstTokenMs: 90, tokensPerSecond: 20 }, LIMIT, QUOTE),
    BASE,
  );
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
  ]) {
    try {
      pacingFor({ [PACING_HEADER]: bad }, BASE, LIMIT, QUOTE);
      assert.unreachable(bad);
    } catch (err) {
      assert.instance(err, ApiError, bad);
      const e = err as ApiError;
      assert.equal([e.status, e.code, e.param], [400, 'invalid_header', PACING_HEADER], bad);
      assert.match(e.message, /ttft=MS; tps=TOKENS_PER_SECOND/);
    }
  }
});

test('the bounds: ttft at most the stream time limit, tps 0 or at least 1 (schemas/config.json); the message says which', () => {
  assert.equal(pacingFor({ [PACING_HEADER]: 'ttft=120000; tps=1' }, BASE, LIMIT, QUOTE), {
    timeToFirstTokenMs: 120000,
    tokensPerSecond: 1,
  });
  assert.equal(pacingFor({ [PACING_HEADER]: 'ttft=600000' }, BASE, 600000, QUOTE), {
    timeToFirstTokenMs: 600000,
    tokensPerSecond: 0,
  });
  assert.equal(pacingFor({ [PACING_HEADER]: 'tps=100000000' }, BASE, LIMIT, QUOTE), {
    timeToFirstTokenMs: 0,
    tokensPerSecond: 100000000,
  });
  const message = (value: string): string => {
    try {
      pacingFor({ [PACING_HEADER]: value }, BASE, LIMIT, QUOTE);
    } catch (err) {
      return (err as ApiError).message;
    }
    throw new Error(`${value} was accepted`);
  };
  assert.match(
    message('tps=0.000000000000000001'),
    /'tps=0\.000000000000000001': tps is below 1 \(use 0 for no pacing\)/,
  );
  assert.match(message('ttft=99999999999999999999'), /ttft is above the stream time limit of 120000 ms/);
});

test.run();
