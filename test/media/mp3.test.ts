import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseBuffer } from 'music-metadata';
import { encodeMp3, mp3DurationSeconds } from '../../src/media/mp3.js';

/** One MPEG-2 Layer III frame at 24 kHz: 576 samples. */
const FRAME_SECONDS = 576 / 24_000;

for (const seconds of [1, 10, 170, 0.5, 2.345]) {
  test(`music-metadata reads a ${seconds} s MP3 with the exact duration`, async () => {
    const buf = encodeMp3(seconds);
    const { format } = await parseBuffer(buf, { mimeType: 'audio/mpeg', size: buf.length }, { duration: true });
    assert.is(format.container, 'MPEG');
    assert.match(String(format.codec), /^MPEG .*Layer 3$/);
    assert.is(format.sampleRate, 24_000);
    assert.is(format.numberOfChannels, 1);
    assert.ok(format.duration !== undefined);
    assert.ok(Math.abs(format.duration - seconds) <= FRAME_SECONDS, `duration ${format.duration} vs ${seconds}`);
    assert.ok(Math.abs(format.duration - mp3DurationSeconds(seconds)) < 1e-9);
  });
}

test('170 s of audio stays well under 1 MB', () => {
  assert.ok(encodeMp3(170).length < 400_000);
});

test('tiny, zero or negative durations give a readable 3-frame file; NaN is rejected', async () => {
  for (const seconds of [-1, 0, 0.03]) {
    const { format } = await parseBuffer(encodeMp3(seconds), 'audio/mpeg');
    assert.is(format.container, 'MPEG');
    assert.is(format.duration, (3 * 576) / 24_000);
  }
  assert.throws(() => encodeMp3(Number.NaN), RangeError);
});

test.run();
