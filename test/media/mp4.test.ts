import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createFile, Log, MP4BoxBuffer, type Movie } from 'mp4box';
import { encodeMp4 } from '../../src/media/mp4.js';

Log.setLogLevel(Log.error);

/** Parses an MP4 with mp4box.js and returns the onReady movie info. */
function probe(buf: Buffer): Movie {
  const file = createFile();
  let info: Movie | undefined;
  let error: string | undefined;
  file.onReady = (movie) => {
    info = movie;
  };
  file.onError = (module, message) => {
    error = `${module}: ${message}`;
  };
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length) as ArrayBuffer;
  file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(ab, 0));
  file.flush();
  assert.is(error, undefined);
  if (info === undefined) throw new Error('mp4box never reported onReady');
  return info;
}

const sizes = [
  [768, 768, 4],
  [1280, 768, 8],
  [768, 1280, 16],
] as const;

for (const [width, height, seconds] of sizes) {
  test(`mp4box reads ${width}x${height} ${seconds}s as avc1 video`, () => {
    const buf = encodeMp4({ width, height, durationSeconds: seconds, seed: 7 });
    const info = probe(buf);
    assert.is(info.duration / info.timescale, seconds);
    assert.ok(info.brands.includes('avc1'));
    assert.is(info.tracks.length, 1);
    assert.is(info.videoTracks.length, 1);
    const track = info.videoTracks[0]!;
    // avc1.PPCCLL: profile 66 (Baseline) with constraint_set0/1 (Constrained Baseline).
    assert.match(track.codec, /^avc1\.42c0[0-9a-f]{2}$/i);
    assert.equal(track.video, { width, height });
    assert.is(track.track_width, width);
    assert.is(track.track_height, height);
    assert.is(track.duration / track.timescale, seconds);
    assert.is(track.movie_duration / track.movie_timescale, seconds);
    assert.is(track.nb_samples, seconds * 24);
    assert.ok(buf.length < 200_000, `size ${buf.length}`);
  });
}

test('frame rate option and fractional durations keep the exact duration', () => {
  const a = probe(encodeMp4({ width: 320, height: 240, durationSeconds: 2.5, seed: 1, fps: 30 }));
  assert.is(a.duration / a.timescale, 2.5);
  assert.is(a.videoTracks[0]!.nb_samples, 75);
  const b = probe(encodeMp4({ width: 320, height: 240, durationSeconds: 1.01, seed: 1 }));
  assert.is(b.duration / b.timescale, 1.01);
  assert.is(b.videoTracks[0]!.nb_samples, 24);
  assert.is(b.videoTracks[0]!.samples_duration, 90_900);
});

test('sizes that are not multiples of 16 are cropped to the exact size', () => {
  const info = probe(encodeMp4({ width: 100, height: 50, durationSeconds: 1, seed: 2 }));
  assert.equal(info.videoTracks[0]!.video, { width: 100, height: 50 });
  const single = probe(encodeMp4({ width: 16, height: 16, durationSeconds: 0.01, seed: 2 }));
  assert.is(single.videoTracks[0]!.nb_samples, 1);
});

test('output is deterministic and depends on the seed', () => {
  const opts = { width: 256, height: 128, durationSeconds: 1, seed: 3 };
  const a = encodeMp4(opts);
  assert.ok(a.equals(encodeMp4(opts)));
  assert.not.ok(a.equals(encodeMp4({ ...opts, seed: 4 })));
});

test('invalid options are rejected', () => {
  assert.throws(() => encodeMp4({ width: 101, height: 50, durationSeconds: 1, seed: 1 }), RangeError);
  assert.throws(() => encodeMp4({ width: 0, height: 50, durationSeconds: 1, seed: 1 }), RangeError);
  assert.throws(() => encodeMp4({ width: 64, height: 64, durationSeconds: 0, seed: 1 }), RangeError);
  assert.throws(() => encodeMp4({ width: 64, height: 64, durationSeconds: 1e-9, seed: 1 }), RangeError);
  assert.throws(() => encodeMp4({ width: 64, height: 64, durationSeconds: Number.NaN, seed: 1 }), RangeError);
  assert.throws(() => encodeMp4({ width: 64, height: 64, durationSeconds: 1, seed: 1, fps: 0 }), RangeError);
});

test.run();
