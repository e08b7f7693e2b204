import { mulberry32 } from '../lib/prng.js';

/** Sample encodings supported by encodeWav. */
type WavEncoding = 'pcm' | 'alaw' | 'mulaw';

/** Options for encodeWav. */
export interface WavOptions {
  sampleRate: number;
  /** Ignored for alaw/mulaw, which are always 8 bits per sample. */
  bitsPerSample: 8 | 16;
  encoding: WavEncoding;
  durationSeconds: number;
  seed: number;
  /** Relative pitch change in percent: 0 keeps the voice's pitch, +50 raises it 1.5x, -50 halves it. */
  pitchPercent?: number;
}

/** WAVE format tags (wFormatTag) from the RIFF specification. */
const FORMAT_TAG: Readonly<Record<WavEncoding, number>> = { pcm: 1, alaw: 6, mulaw: 7 };

/**
 * Renders one "phrase": a few voiced syllables (a gliding fundamental plus two harmonics
 * under a bell envelope) separated by short gaps and followed by a pause. The full file is
 * this phrase tiled, which keeps long outputs cheap to produce.
 */
function renderPhrase(sampleRate: number, seed: number, pitchPercent: number): Int16Array {
  const next = mulberry32(seed);
  const pitch = 1 + Math.min(400, Math.max(-90, pitchPercent)) / 100;
  const base = (100 + next() * 120) * pitch;
  const syllables = 4 + Math.floor(next() * 5);
  const parts: { length: number; from: number; to: number }[] = [];
  for (let i = 0; i < syllables; i++) {
    const from = base * (0.85 + next() * 0.4);
    parts.push({ length: Math.round(sampleRate * (0.12 + next() * 0.14)), from, to: from * (0.9 + next() * 0.2) });
    parts.push({ length: Math.round(sampleRate * (0.04 + next() * 0.08)), from: 0, to: 0 });
  }
  parts.push({ length: Math.round(sampleRate * 0.35), from: 0, to: 0 });

  const total = parts.reduce((sum, p) => sum + Math.max(1, p.length), 0);
  const out = new Int16Array(total);
  const amplitude = 0.3 * 32767;
  let pos = 0;
  for (const part of parts) {
    const n = Math.max(1, part.length);
    if (part.from > 0) {
      let phase = 0;
      for (let i = 0; i < n; i++) {
        const t = i / n;
        phase += (2 * Math.PI * (part.from + (part.to - part.from) * t)) / sampleRate;
        const env = 0.5 - 0.5 * Math.cos(2 * Math.PI * t);
        const voice = (Math.sin(phase) + 0.5 * Math.sin(2 * phase) + 0.25 * Math.sin(3 * phase)) / 1.75;
        out[pos + i] = Math.round(amplitude * env * voice);
      }
    }
    pos += n;
  }
  return out;
}

/** G.711 mu-law encoding of one 16-bit linear sample. */
function muLaw(sample: number): number {
  const sign = sample < 0 ? 0x80 : 0;
  const s = Math.min(32635, Math.abs(sample)) + 0x84;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** G.711 A-law encoding of one 16-bit linear sample. */
function aLaw(sample: number): number {
  const sign = sample >= 0 ? 0x80 : 0;
  const s = Math.min(32635, sample >= 0 ? sample : -sample - 1);
  let compressed: number;
  if (s >= 256) {
    let exponent = 7;
    for (let mask = 0x4000; (s & mask) === 0 && exponent > 1; mask >>= 1) exponent--;
    compressed = (exponent << 4) | ((s >> (exponent + 3)) & 0x0f);
  } else {
    compressed = s >> 4;
  }
  return (compressed ^ sign ^ 0x55) & 0xff;
}

/** Converts linear samples to the on-disk sample bytes for the chosen encoding. */
function encodeSamples(samples: Int16Array, encoding: WavEncoding, bits: 8 | 16): Buffer {
  if (bits === 16) {
    const out = Buffer.alloc(samples.length * 2);
    for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, i * 2);
    return out;
  }
  const out = Buffer.alloc(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i]!;
    // 8-bit PCM WAV is unsigned with 128 as the zero line.
    out[i] = encoding === 'alaw' ? aLaw(s) : encoding === 'mulaw' ? muLaw(s) : (s >> 8) + 128;
  }
  return out;
}

/** Encodes a mono RIFF WAVE file containing a deterministic speech-like tone pattern. */
export function encodeWav(opts: WavOptions): Buffer {
  const { sampleRate, encoding, durationSeconds, seed } = opts;
  if (!Number.isInteger(sampleRate) || sampleRate < 1) throw new RangeError(`invalid sampleRate ${sampleRate}`);
  if (!Number.isFinite(durationSeconds) || durationSeconds < 0) {
    throw new RangeError(`invalid durationSeconds ${durationSeconds}`);
  }
  const companded = encoding !== 'pcm';
  const bits: 8 | 16 = companded ? 8 : opts.bitsPerSample;
  const bytesPerSample = bits / 8;
  const sampleCount = Math.round(durationSeconds * sampleRate);
  const dataBytes = sampleCount * bytesPerSample;
  const pad = dataBytes & 1; // RIFF chunks are word aligned

  // Non-PCM formats need the 18-byte WAVEFORMATEX (with cbSize) and a fact chunk.
  const fmtSize = companded ? 18 : 16;
  const factSize = companded ? 12 : 0;
  const headerBytes = 12 + 8 + fmtSize + factSize + 8;
  const out = Buffer.alloc(headerBytes + dataBytes + pad);

  let p = 0;
  p += out.write('RIFF', p, 'latin1');
  p = out.writeUInt32LE(out.length - 8, p);
  p += out.write('WAVE', p, 'latin1');
  p += out.write('fmt ', p, 'latin1');
  p = out.writeUInt32LE(fmtSize, p);
  p = out.writeUInt16LE(FORMAT_TAG[encoding], p);
  p = out.writeUInt16LE(1, p); // mono
  p = out.writeUInt32LE(sampleRate, p);
  p = out.writeUInt32LE(sampleRate * bytesPerSample, p); // byte rate
  p = out.writeUInt16LE(bytesPerSample, p); // block align
  p = out.writeUInt16LE(bits, p);
  if (companded) {
    p = out.writeUInt16LE(0, p); // cbSize
    p += out.write('fact', p, 'latin1');
    p = out.writeUInt32LE(4, p);
    p = out.writeUInt32LE(sampleCount, p);
  }
  p += out.write('data', p, 'latin1');
  p = out.writeUInt32LE(dataBytes, p);

  if (dataBytes > 0) {
    const phrase = encodeSamples(renderPhrase(sampleRate, seed, opts.pitchPercent ?? 0), encoding, bits);
    const first = Math.min(phrase.length, dataBytes);
    phrase.copy(out, p, 0, first);
    // Tile by doubling the already-written prefix: log2(n) large memcpy calls. The prefix is
    // always a whole number of phrases, so the pattern stays seamless.
    let filled = first;
    while (filled < dataBytes) {
      const n = Math.min(filled, dataBytes - filled);
      out.copy(out, p + filled, p, p + n);
      filled += n;
    }
  }
  return out;
}
