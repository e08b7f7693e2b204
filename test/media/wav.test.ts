import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseBuffer } from 'music-metadata';
import { encodeWav, type WavOptions } from '../../src/media/wav.js';

const cases: { opts: WavOptions; codec: RegExp }[] = [
  { opts: { sampleRate: 8000, bitsPerSample: 8, encoding: 'alaw', durationSeconds: 3.25, seed: 1 }, codec: /^ALAW$/ },
  { opts: { sampleRate: 8000, bitsPerSample: 8, encoding: 'mulaw', durationSeconds: 2.5, seed: 2 }, codec: /^MULAW$/ },
  { opts: { sampleRate: 8000, bitsPerSample: 8, encoding: 'pcm', durationSeconds: 1.0001, seed: 2 }, codec: /PCM/ },
  { opts: { sampleRate: 22050, bitsPerSample: 16, encoding: 'pcm', durationSeconds: 4, seed: 3 }, codec: /PCM/ },
  {
    opts: { sampleRate: 24000, bitsPerSample: 16, encoding: 'pcm', durationSeconds: 1.5, seed: 4, pitchPercent: 20 },
    codec: /PCM/,
  },
  {
    opts: { sampleRate: 44100, bitsPerSample: 16, encoding: 'pcm', durationSeconds: 7, seed: 5, pitchPercent: -30 },
    codec: /PCM/,
  },
  { opts: { sampleRate: 48000, bitsPerSample: 16, encoding: 'pcm', durationSeconds: 12.5, seed: 6 }, codec: /PCM/ },
];

for (const { opts, codec } of cases) {
  test(`music-metadata reads ${opts.sampleRate} Hz ${opts.encoding} ${opts.bitsPerSample}-bit`, async () => {
    const buf = encodeWav(opts);
    const { format } = await parseBuffer(buf, 'audio/wav');
    assert.is(format.container, 'WAVE');
    assert.match(String(format.codec), codec);
    assert.is(format.sampleRate, opts.sampleRate);
    assert.is(format.bitsPerSample, opts.bitsPerSample);
    assert.is(format.numberOfChannels, 1);
    assert.ok(format.duration !== undefined);
    assert.ok(Math.abs(format.duration - opts.durationSeconds) <= 1 / opts.sampleRate, `duration ${format.duration}`);
  });
}

test('companded formats are always 8-bit with a fact chunk', async () => {
  const buf = encodeWav({ sampleRate: 8000, bitsPerSample: 16, encoding: 'mulaw', durationSeconds: 1, seed: 1 });
  const { format } = await parseBuffer(buf, 'audio/wav');
  assert.is(format.bitsPerSample, 8);
  assert.ok(buf.includes(Buffer.from('fact')));
});

test('audio is not silent, is deterministic and depends on the seed', () => {
  const opts: WavOptions = { sampleRate: 16000, bitsPerSample: 16, encoding: 'pcm', durationSeconds: 2, seed: 11 };
  const a = encodeWav(opts);
  const samples = new Int16Array(a.buffer, a.byteOffset + 44, (a.length - 44) / 2);
  let peak = 0;
  for (const s of samples) peak = Math.max(peak, Math.abs(s));
  assert.ok(peak > 3000, `peak ${peak}`);
  assert.ok(a.equals(encodeWav(opts)));
  assert.not.ok(a.equals(encodeWav({ ...opts, seed: 12 })));
  assert.not.ok(a.equals(encodeWav({ ...opts, pitchPercent: 50 })));
});

test('odd-length 8-bit data is padded to an even chunk size', async () => {
  const buf = encodeWav({ sampleRate: 8000, bitsPerSample: 8, encoding: 'pcm', durationSeconds: 0.000375, seed: 1 });
  assert.is(buf.length % 2, 0);
  assert.is(buf.readUInt32LE(4), buf.length - 8);
  const { format } = await parseBuffer(buf, 'audio/wav');
  assert.is(format.duration, 3 / 8000);
});

test('zero duration gives an empty data chunk; invalid options are rejected', async () => {
  const buf = encodeWav({ sampleRate: 8000, bitsPerSample: 16, encoding: 'pcm', durationSeconds: 0, seed: 1 });
  assert.is(buf.length, 44);
  assert.throws(
    () => encodeWav({ sampleRate: 0, bitsPerSample: 16, encoding: 'pcm', durationSeconds: 1, seed: 1 }),
    RangeError,
  );
  assert.throws(
    () => encodeWav({ sampleRate: 8000, bitsPerSample: 16, encoding: 'pcm', durationSeconds: -1, seed: 1 }),
    RangeError,
  );
});

// Its speed is the benchmark's business (tts and speech scenarios), not a timed assertion here.
test('10 minutes at 48 kHz 16-bit has exactly the bytes of its header and samples', () => {
  const buf = encodeWav({ sampleRate: 48000, bitsPerSample: 16, encoding: 'pcm', durationSeconds: 600, seed: 1 });
  assert.is(buf.length, 44 + 600 * 48000 * 2);
});

test.run();
