import { encodeH264 } from './h264.js';

/** Options for encodeMp4. */
interface Mp4Options {
  width: number;
  height: number;
  durationSeconds: number;
  seed: number;
  /** Frames per second; defaults to 24. */
  fps?: number;
}

/** 90 kHz divides evenly by the common frame rates (24, 25, 30, 50, 60). */
const TIMESCALE = 90_000;

/** The identity transform matrix used by mvhd and tkhd (16.16 and 2.30 fixed point). */
const UNITY_MATRIX = [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000];

/** Builds an ISO BMFF box from its four-character type and payload parts. */
function box(type: string, ...parts: Buffer[]): Buffer {
  const size = 8 + parts.reduce((sum, p) => sum + p.length, 0);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(size, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, ...parts], size);
}

/** Builds a full box: version (8 bits) and flags (24 bits) precede the payload. */
function fullBox(type: string, version: number, flags: number, ...parts: Buffer[]): Buffer {
  const vf = Buffer.alloc(4);
  vf.writeUInt32BE(((version << 24) | flags) >>> 0, 0);
  return box(type, vf, ...parts);
}

/** Serialises a list of 32-bit big-endian unsigned integers. */
function u32(...values: number[]): Buffer {
  const out = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => out.writeUInt32BE(v >>> 0, i * 4));
  return out;
}

function u16(...values: number[]): Buffer {
  const out = Buffer.alloc(values.length * 2);
  values.forEach((v, i) => out.writeUInt16BE(v & 0xffff, i * 2));
  return out;
}

function mvhd(duration: number): Buffer {
  return fullBox(
    'mvhd',
    0,
    0,
    u32(0, 0, TIMESCALE, duration), // creation, modification, timescale, duration
    u32(0x00010000), // rate 1.0
    u16(0x0100, 0), // volume 1.0, reserved
    u32(0, 0), // reserved
    u32(...UNITY_MATRIX),
    u32(0, 0, 0, 0, 0, 0), // pre_defined
    u32(2), // next_track_ID
  );
}

function tkhd(duration: number, width: number, height: number): Buffer {
  return fullBox(
    'tkhd',
    0,
    0x000003, // track_enabled | track_in_movie
    u32(0, 0, 1, 0, duration), // creation, modification, track_ID, reserved, duration
    u32(0, 0), // reserved
    u16(0, 0, 0, 0), // layer, alternate_group, volume (0 for video), reserved
    u32(...UNITY_MATRIX),
    u32(width * 0x10000, height * 0x10000), // 16.16 fixed point
  );
}

function mdhd(duration: number): Buffer {
  // Language 'und' packed as three 5-bit letters offset by 0x60.
  const und = ((0x75 - 0x60) << 10) | ((0x6e - 0x60) << 5) | (0x64 - 0x60);
  return fullBox('mdhd', 0, 0, u32(0, 0, TIMESCALE, duration), u16(und, 0));
}

function hdlr(): Buffer {
  return fullBox(
    'hdlr',
    0,
    0,
    u32(0),
    Buffer.from('vide', 'latin1'),
    u32(0, 0, 0),
    Buffer.from('VideoHandler\0', 'latin1'),
  );
}

function avc1(width: number, height: number, avcC: Buffer): Buffer {
  const compressorName = Buffer.alloc(32); // Pascal string, left empty
  return box(
    'avc1',
    Buffer.alloc(6), // reserved
    u16(1), // data_reference_index
    u16(0, 0), // pre_defined, reserved
    u32(0, 0, 0), // pre_defined
    u16(width, height),
    u32(0x00480000, 0x00480000), // 72 dpi
    u32(0), // reserved
    u16(1), // frame_count per sample
    compressorName,
    u16(0x0018, 0xffff), // depth 24, pre_defined -1
    avcC,
  );
}

function avcC(sps: Buffer, pps: Buffer, profile: number, compatibility: number, level: number): Buffer {
  return box(
    'avcC',
    Buffer.from([1, profile, compatibility, level, 0xff, 0xe1]), // 4-byte NAL lengths, 1 SPS
    u16(sps.length),
    sps,
    Buffer.from([1]),
    u16(pps.length),
    pps,
  );
}

/**
 * Sample durations as stts runs: every frame lasts floor(total / n) ticks and the last one
 * absorbs the remainder, so the track duration equals the requested duration exactly.
 */
function sttsEntries(frameCount: number, totalTicks: number): number[] {
  const delta = Math.floor(totalTicks / frameCount);
  const last = totalTicks - delta * (frameCount - 1);
  if (last === delta) return [frameCount, delta];
  return frameCount > 1 ? [frameCount - 1, delta, 1, last] : [1, last];
}

/** Encodes a playable MP4 (single H.264 video track) of a static seed-coloured picture. */
export function encodeMp4(opts: Mp4Options): Buffer {
  const { width, height, durationSeconds, seed } = opts;
  const fps = opts.fps ?? 24;
  if (!Number.isFinite(fps) || fps <= 0) throw new RangeError(`invalid fps ${fps}`);
  const totalTicks = Math.round(durationSeconds * TIMESCALE);
  if (!Number.isFinite(durationSeconds) || totalTicks < 1) {
    throw new RangeError(`invalid durationSeconds ${durationSeconds}`);
  }
  const frameCount = Math.max(1, Math.min(Math.round(durationSeconds * fps), totalTicks));
  const stream = encodeH264({ width, height, frameCount, seed, fps });

  // Samples are length-prefixed NAL units (avcC lengthSizeMinusOne = 3).
  const samples = stream.frames.map((nal) => Buffer.concat([u32(nal.length), nal]));
  const sampleSizes = samples.map((s) => s.length);
  const stts = sttsEntries(frameCount, totalTicks);

  const buildMoov = (chunkOffset: number): Buffer =>
    box(
      'moov',
      mvhd(totalTicks),
      box(
        'trak',
        tkhd(totalTicks, width, height),
        box(
          'mdia',
          mdhd(totalTicks),
          hdlr(),
          box(
            'minf',
            fullBox('vmhd', 0, 1, u16(0, 0, 0, 0)), // graphicsmode copy, opcolor
            box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1))), // media in this file
            box(
              'stbl',
              fullBox(
                'stsd',
                0,
                0,
                u32(1),
                avc1(
                  width,
                  height,
                  avcC(stream.sps, stream.pps, stream.profileIdc, stream.profileCompatibility, stream.levelIdc),
                ),
              ),
              fullBox('stts', 0, 0, u32(stts.length / 2, ...stts)),
              fullBox('stss', 0, 0, u32(1, 1)), // only the first sample is a sync sample
              fullBox('stsc', 0, 0, u32(1, 1, frameCount, 1)), // a single chunk holds every sample
              fullBox('stsz', 0, 0, u32(0, frameCount, ...sampleSizes)),
              fullBox('stco', 0, 0, u32(1, chunkOffset)),
            ),
          ),
        ),
      ),
    );

  const ftyp = box('ftyp', Buffer.from('isom', 'latin1'), u32(0x200), Buffer.from('isomiso2avc1mp41', 'latin1'));
  // moov precedes mdat (progressive-download friendly); its size does not depend on the
  // chunk offset value, so build once to measure and once with the real offset.
  const moovSize = buildMoov(0).length;
  const mdatHeaderSize = 8;
  const moov = buildMoov(ftyp.length + moovSize + mdatHeaderSize);
  return Buffer.concat([ftyp, moov, box('mdat', ...samples)]);
}
