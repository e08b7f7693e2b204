import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { closest, editDistance } from '../../src/lib/suggest.js';

test('edit distance counts insertions, deletions, substitutions and swaps of neighbours', () => {
  assert.is(editDistance('serve', 'serve'), 0);
  assert.is(editDistance('serv', 'serve'), 1);
  assert.is(editDistance('prot', 'port'), 1, 'a swap is one edit');
  assert.is(editDistance('kitten', 'sitting'), 3);
  assert.is(editDistance('', 'abc'), 3);
});

test('closest: the candidate a typo meant, none when nothing is close', () => {
  const flags = ['port', 'host', 'profile', 'latency', 'latency-seed', 'strict'];
  assert.is(closest('prot', flags), 'port');
  assert.is(closest('hots', flags), 'host');
  assert.is(closest('latncy', flags), 'latency');
  assert.is(closest('colour', flags), undefined);
  assert.is(closest('serv', ['serve', 'conformance', 'client-check', 'openapi']), 'serve');
  assert.is(closest('conformence', ['serve', 'conformance', 'client-check', 'openapi']), 'conformance');
  assert.is(closest('launch', ['serve', 'conformance', 'client-check', 'openapi']), undefined);
  // A prefix of exactly one candidate.
  assert.is(closest('confo', ['serve', 'conformance']), 'conformance');
  assert.is(closest('latency-s', flags), 'latency-seed');
});

test.run();
