import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../../src/contract/errors.js';
import { faultFromHeaders, parseFaultHeader, parsePrefer } from '../../../src/domain/faults/header.js';
import { describeFault, faultProblem } from '../../../src/domain/faults/spec.js';

const LIMITS = { maxDelayMs: 60_000 };

function rejects(fn: () => unknown, message: RegExp, param = 'x-mock-fault'): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, ApiError);
    const e = err as ApiError;
    assert.is(e.status, 400);
    assert.is(e.code, 'invalid_header');
    assert.is(e.param, param);
    assert.match(e.message, message);
    return;
  }
  assert.unreachable(`expected a 400 matching ${message}`);
}

test('every directive of the grammar is read, with spaces and any case', () => {
  assert.equal(parseFaultHeader('status=503; retry-after=2.5 ;no-retry', LIMITS), {
    status: 503,
    retryAfter: 2.5,
    noRetry: true,
  });
  assert.equal(parseFaultHeader('DELAY = 250;reset', LIMITS), { delayMs: 250, reset: true });
  assert.equal(parseFaultHeader('empty', LIMITS), { empty: true });
  assert.equal(parseFaultHeader('malformed;stream-cut=3', LIMITS), { malformed: true, streamCut: 3 });
  assert.equal(parseFaultHeader('stall=0', LIMITS), { stall: 0 });
  // Node joins repeated headers with ", ": a comma separates directives too.
  assert.equal(parseFaultHeader('status=500, no-retry', LIMITS), { status: 500, noRetry: true });
});

test('a malformed X-Mock-Fault is a 400 that names the problem', () => {
  rejects(() => parseFaultHeader('explode', LIMITS), /unknown directive 'explode'/);
  rejects(() => parseFaultHeader('status=200', LIMITS), /status='200' is not an error status from 400 to 599/);
  rejects(() => parseFaultHeader('status=5xx', LIMITS), /not an error status/);
  rejects(() => parseFaultHeader('status', LIMITS), /'status' needs a value/);
  rejects(() => parseFaultHeader('status=', LIMITS), /'status' needs a value/);
  rejects(() => parseFaultHeader('reset=1', LIMITS), /'reset' takes no value/);
  rejects(() => parseFaultHeader('status=500;status=502', LIMITS), /'status' is given twice/);
  rejects(() => parseFaultHeader('stream-cut=-1', LIMITS), /stream-cut='-1' must be a whole number/);
  rejects(() => parseFaultHeader('stall=1.5', LIMITS), /stall='1.5' must be a whole number/);
  rejects(() => parseFaultHeader('retry-after=soon;status=429', LIMITS), /retry-after='soon' must be seconds/);
  rejects(() => parseFaultHeader('retry-after=7200;status=429', LIMITS), /from 0 to 3600/);
  rejects(() => parseFaultHeader('delay=60001', LIMITS), /above the server maximum of 60000 ms/);
  rejects(() => parseFaultHeader(' ; ', LIMITS), /no fault directive given/);
});

test('directives that cannot go together are refused', () => {
  rejects(() => parseFaultHeader('reset;status=500', LIMITS), /'reset' and 'status' cannot be combined/);
  rejects(() => parseFaultHeader('empty;malformed', LIMITS), /'empty' and 'malformed'/);
  rejects(() => parseFaultHeader('status=500;stream-cut=1', LIMITS), /'status' and 'stream-cut'/);
  rejects(() => parseFaultHeader('stall=1;stream-cut=1', LIMITS), /'stream-cut' and 'stall'/);
  rejects(() => parseFaultHeader('retry-after=1', LIMITS), /'retry-after' needs 'status'/);
  assert.is(faultProblem({ delayMs: 5, status: 500, retryAfter: 0 }, LIMITS), undefined);
});

test('Prefer: code=NNN is read among other preferences; a bad code is a 400', () => {
  assert.is(parsePrefer(undefined), undefined);
  assert.is(parsePrefer('return=minimal'), undefined);
  assert.is(parsePrefer('code=429'), 429);
  assert.is(parsePrefer('return=minimal, code="500"; foo=bar, example=x'), 500);
  assert.is(parsePrefer('code=404, code=404'), 404);
  rejects(() => parsePrefer('code=200'), /code='200' is not an error status/, 'prefer');
  rejects(() => parsePrefer('code=abc'), /not an error status/, 'prefer');
  rejects(() => parsePrefer('code=500, code=502'), /given twice/, 'prefer');
});

test('Prefer and X-Mock-Fault merge; disagreement and conflicts are refused', () => {
  assert.is(faultFromHeaders({}, LIMITS), undefined);
  assert.is(faultFromHeaders({ 'x-mock-fault': '  ' }, LIMITS), undefined);
  assert.equal(faultFromHeaders({ prefer: 'code=503' }, LIMITS), { status: 503 });
  assert.equal(faultFromHeaders({ prefer: 'code=503', 'x-mock-fault': 'retry-after=2;delay=10' }, LIMITS), {
    status: 503,
    retryAfter: 2,
    delayMs: 10,
  });
  assert.equal(faultFromHeaders({ prefer: 'code=503', 'x-mock-fault': 'status=503' }, LIMITS), { status: 503 });
  assert.equal(faultFromHeaders({ 'x-mock-fault': ['status=500', 'no-retry'] }, LIMITS), {
    status: 500,
    noRetry: true,
  });
  rejects(
    () => faultFromHeaders({ prefer: 'code=503', 'x-mock-fault': 'status=500' }, LIMITS),
    /status=500 disagrees with 'Prefer: code=503'/,
  );
  rejects(
    () => faultFromHeaders({ prefer: 'code=503', 'x-mock-fault': 'reset' }, LIMITS),
    /'reset' and 'status' cannot be combined \(Prefer: code=503 counts as status=503\)/,
  );
});

test('a fault is described in header form, in a fixed order', () => {
  assert.is(describeFault({ noRetry: true, retryAfter: 0.5, status: 429 }), 'status=429;retry-after=0.5;no-retry');
  assert.is(describeFault({ stall: 2, delayMs: 10 }), 'delay=10;stall=2');
  assert.is(describeFault({ reset: true }), 'reset');
});

test.run();
