// A stream fault applied to a relayed stream, block by block: what goes out for each of the upstream's
// blocks, when the stream is over, and how it ends (cut, held, or broken then [DONE]), as the mock ends its own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BROKEN_EVENT } from '../../src/pipeline/sse.js';
import { RelayedStreamFault } from '../../src/relay/streamFault.js';

const block = (data: string): string => `data: ${data}\n\n`;
const A = block('{"n":1}');
const B = block('{"n":2}');
const C = block('{"n":3}');
const DONE = block('[DONE]');
const BROKEN = block(BROKEN_EVENT);
const COMMENT = ': keep-alive\n\n';

/** Feeds blocks through a fault; what went out for each, and whether the stream was over after it. */
function feed(fault: RelayedStreamFault, blocks: readonly string[]): { out: string[]; over: boolean[] } {
  const out: string[] = [];
  const over: boolean[] = [];
  for (const b of blocks) {
    out.push(fault.take(b));
    over.push(fault.over);
  }
  return { out, over };
}

test('no fault, or one that leaves streams alone: nothing to apply', () => {
  assert.is(RelayedStreamFault.of(undefined), undefined);
  assert.is(RelayedStreamFault.of({}), undefined);
  assert.is(RelayedStreamFault.of({ status: 503 }), undefined);
  assert.is(RelayedStreamFault.of({ delayMs: 100 }), undefined);
});

test('stream-cut=2: two events go out whole, then the stream is over, with no [DONE], to be cut', () => {
  const fault = RelayedStreamFault.of({ streamCut: 2 })!;
  assert.is(fault.ending, 'cut');
  assert.is(fault.over, false);
  assert.equal(feed(fault, [A, COMMENT, B, C, DONE]), {
    out: [A, COMMENT, B, '', ''],
    over: [false, false, true, true, true],
  });
  assert.is(fault.end(), '');
});

test('stall=1: one event, then the stream is over, to be held silent', () => {
  const fault = RelayedStreamFault.of({ stall: 1 })!;
  assert.is(fault.ending, 'stall');
  assert.equal(feed(fault, [A, B]), { out: [A, ''], over: [true, true] });
});

test('stream-cut=0 and stall=0: over before the first event', () => {
  for (const spec of [{ streamCut: 0 }, { stall: 0 }]) {
    const fault = RelayedStreamFault.of(spec)!;
    assert.is(fault.over, true, JSON.stringify(spec));
    assert.is(fault.take(A), '');
  }
});

test('an upstream that ends before the count: its [DONE] does not go out, the stream still ends as the fault says', () => {
  const fault = RelayedStreamFault.of({ streamCut: 5 })!;
  assert.equal(feed(fault, [A, B, DONE]), { out: [A, B, ''], over: [false, false, true] });
});

test('malformed: the first event waits for the second, which goes out broken; [DONE] follows', () => {
  const fault = RelayedStreamFault.of({ malformed: true })!;
  assert.is(fault.ending, undefined);
  assert.equal(feed(fault, [A, B, C, DONE]), { out: ['', A + BROKEN, C, DONE], over: [false, false, false, false] });
  assert.is(fault.end(), '');
});

test('malformed with one event: that event goes out broken, before [DONE] or at the end of the stream', () => {
  const withDone = RelayedStreamFault.of({ malformed: true })!;
  assert.equal(feed(withDone, [A, DONE]).out, ['', BROKEN + DONE]);
  const withoutDone = RelayedStreamFault.of({ malformed: true })!;
  assert.equal(feed(withoutDone, [A]).out, ['']);
  assert.is(withoutDone.end(), BROKEN);
  assert.is(withoutDone.end(), '', 'released once');
});

test('malformed with stream-cut=1: the count ends the stream first, and the held event goes out as it came', () => {
  const fault = RelayedStreamFault.of({ malformed: true, streamCut: 1 })!;
  assert.is(fault.ending, 'cut');
  assert.equal(feed(fault, [A, B]), { out: [A, ''], over: [true, true] });
  assert.is(fault.end(), '');
});

test('malformed with stream-cut=2: the broken second event is the last', () => {
  const fault = RelayedStreamFault.of({ malformed: true, streamCut: 2 })!;
  assert.equal(feed(fault, [A, B, C]), { out: ['', A + BROKEN, ''], over: [false, true, true] });
});

test.run();
