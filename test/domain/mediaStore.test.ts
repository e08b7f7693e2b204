import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MediaStore, parseSize } from '../../src/domain/mediaStore.js';
import { readImageInfo } from '../../src/media/imageInfo.js';
import { encodeMp3 } from '../../src/media/mp3.js';

test('parseSize reads WIDTHxHEIGHT', () => {
  assert.equal(parseSize('1792x1024'), [1792, 1024]);
});

test('each kind of media is made once per parameters and served from the cache after', () => {
  const store = new MediaStore({ entries: 16, bytes: 64 * 1024 * 1024 }, 24);
  const png = store.png(64, 32, 7);
  assert.equal(readImageInfo(png), { format: 'png', width: 64, height: 32 });
  assert.ok(store.png(64, 32, 7) === png, 'the same buffer comes back for the same parameters');
  assert.ok(store.png(64, 32, 8) !== png, 'another seed is another image');
  const mp4 = store.mp4('768x768', 4, 1);
  assert.is(mp4.subarray(4, 8).toString('latin1'), 'ftyp');
  assert.ok(store.mp4('768x768', 4, 1) === mp4);
  assert.ok(store.mp4('768x768', 8, 1) !== mp4, 'another duration is another video');
  const mp3 = store.mp3(2);
  assert.equal(mp3, encodeMp3(2));
  assert.ok(store.mp3(2) === mp3);
  const format = { sampleRate: 8000, bitsPerSample: 16 as const, encoding: 'pcm' as const };
  const wav = store.wav('riff-8khz-16bit-mono-pcm', { ...format, durationSeconds: 1, seed: 3, pitchPercent: 0 });
  assert.is(wav.subarray(0, 4).toString('latin1'), 'RIFF');
  assert.ok(store.wav('riff-8khz-16bit-mono-pcm', { ...format, durationSeconds: 1, seed: 3, pitchPercent: 0 }) === wav);
  assert.ok(
    store.wav('riff-8khz-16bit-mono-pcm', { ...format, durationSeconds: 1, seed: 3, pitchPercent: 10 }) !== wav,
    'pitch is part of the key',
  );
});

test('the cache is bounded: with room for one entry, an older body is made again', () => {
  const store = new MediaStore({ entries: 1, bytes: 64 * 1024 * 1024 }, 24);
  const first = store.png(16, 16, 1);
  store.png(16, 16, 2);
  const again = store.png(16, 16, 1);
  assert.ok(again !== first, 'evicted and made anew');
  assert.equal(again, first, 'with the same bytes');
});

test.run();
