/**
 * Silent MP3 built from MPEG-2 Layer III frames: 24 kHz, mono, 16 kbit/s CBR. Each frame is
 * 576 samples (24 ms) in exactly 48 bytes (72 * 16000 / 24000, no padding slot needed),
 * so 170 s of audio is about 340 KB.
 */
const SAMPLE_RATE = 24_000;
const SAMPLES_PER_FRAME = 576;
const FRAME_BYTES = 48;

/**
 * Frame header: sync (11 bits), MPEG-2 ('10'), Layer III ('01'), no CRC; bitrate index 2
 * (16 kbit/s) and sample-rate index 1 (24 kHz); mono, no emphasis.
 */
const FRAME_HEADER = [0xff, 0xf3, 0x24, 0xc0] as const;

/** MPEG-2 mono side information is 9 bytes; the Xing/Info tag starts right after it. */
const INFO_TAG_OFFSET = 4 + 9;

/**
 * Parsers that sniff the stream (music-metadata ignores MPEG data shorter than 164 bytes)
 * need a few frames, so very short requests are rounded up to 72 ms.
 */
const MIN_FRAMES = 3;

/** Number of audio frames used for a requested duration (at least three). */
function mp3FrameCount(durationSeconds: number): number {
  const frames = Math.round((Math.max(0, durationSeconds) * SAMPLE_RATE) / SAMPLES_PER_FRAME);
  return Math.max(MIN_FRAMES, frames);
}

/** Duration in seconds that decoders report for an MP3 produced by encodeMp3. */
export function mp3DurationSeconds(durationSeconds: number): number {
  return (mp3FrameCount(durationSeconds) * SAMPLES_PER_FRAME) / SAMPLE_RATE;
}

/** Encodes a silent, decodable MP3 of the requested duration (within one 24 ms frame, minimum 72 ms). */
export function encodeMp3(durationSeconds: number): Buffer {
  if (!Number.isFinite(durationSeconds)) throw new RangeError('durationSeconds must be finite');
  const frames = mp3FrameCount(durationSeconds);
  // One leading Info frame plus the audio frames. All-zero side information means
  // part2_3_length = 0 and main_data_begin = 0: a valid granule with no coefficients,
  // which every decoder renders as digital silence.
  const total = (frames + 1) * FRAME_BYTES;
  const out = Buffer.alloc(total);
  for (let offset = 0; offset < total; offset += FRAME_BYTES) {
    out[offset] = FRAME_HEADER[0];
    out[offset + 1] = FRAME_HEADER[1];
    out[offset + 2] = FRAME_HEADER[2];
    out[offset + 3] = FRAME_HEADER[3];
  }
  // 'Info' is the CBR spelling of the Xing tag. Decoders take the duration from the frame
  // count, which excludes the tag frame itself (they skip it rather than play it).
  // music-metadata only trusts the count when the byte-size field is present as well.
  out.write('Info', INFO_TAG_OFFSET, 'latin1');
  out.writeUInt32BE(0x0000_0003, INFO_TAG_OFFSET + 4); // flags: frames + bytes
  out.writeUInt32BE(frames, INFO_TAG_OFFSET + 8);
  out.writeUInt32BE(total, INFO_TAG_OFFSET + 12);
  return out;
}
