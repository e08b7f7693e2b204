import { mulberry32 } from '../lib/prng.js';

/**
 * Minimal hand-written H.264 (Constrained Baseline, CAVLC) encoder for static test video.
 *
 * The first frame is an IDR picture whose top macroblock row and left macroblock column are
 * I_PCM blocks in seed-derived colours; every other macroblock is I_16x16 with DC
 * prediction and no residual, so the decoder smoothly blends the border colours across the
 * frame at a cost of one byte per macroblock. Every later frame is a P picture made of a
 * single run of P_Skip macroblocks, i.e. a copy of the previous frame in a few bytes.
 */

/** Options for encodeH264. */
interface H264Options {
  width: number;
  height: number;
  frameCount: number;
  seed: number;
  /** Frame rate, used only to pick a level whose macroblock rate fits; defaults to 30. */
  fps?: number;
}

/** An encoded H.264 elementary stream, split into the pieces an MP4 muxer needs. */
interface H264Stream {
  /** Sequence parameter set NAL unit (header byte included, no start code). */
  sps: Buffer;
  /** Picture parameter set NAL unit (header byte included, no start code). */
  pps: Buffer;
  profileIdc: number;
  /** The constraint_set flags byte, as stored in avcC's profile_compatibility. */
  profileCompatibility: number;
  levelIdc: number;
  /** One NAL unit per frame in decoding order; frames[0] is the IDR picture. */
  frames: Buffer[];
}

const PROFILE_BASELINE = 66;
/** constraint_set0_flag and constraint_set1_flag: Constrained Baseline. */
const CONSTRAINT_FLAGS = 0xc0;
/** log2_max_frame_num = 4, the minimum; frame_num simply wraps, which is legal. */
const LOG2_MAX_FRAME_NUM = 4;

const NAL_SLICE = 1;
const NAL_IDR = 5;
const NAL_SPS = 7;
const NAL_PPS = 8;

/** I-slice mb_type values (Table 7-11). */
const MB_I16X16_DC_NO_RESIDUAL = 3; // I_16x16_2_0_0: DC prediction, no chroma/luma AC
const MB_I_PCM = 25;

/** Accumulates a big-endian bit string with the Exp-Golomb codes H.264 uses. */
export class BitWriter {
  private buf = new Uint8Array(256);
  private length = 0;
  private current = 0;
  private bitCount = 0;

  /** Writes `bits` (0..31) bits of `value`, most significant first. */
  u(bits: number, value: number): this {
    for (let i = bits - 1; i >= 0; i--) this.bit((value >>> i) & 1);
    return this;
  }

  /** Writes an unsigned Exp-Golomb code. */
  ue(value: number): this {
    const codeNum = value + 1;
    const size = 32 - Math.clz32(codeNum);
    return this.u(size - 1, 0).u(size, codeNum);
  }

  /** Writes a signed Exp-Golomb code. */
  se(value: number): this {
    return this.ue(value <= 0 ? -2 * value : 2 * value - 1);
  }

  /** Pads with zero bits up to the next byte boundary. */
  alignZero(): this {
    while (this.bitCount !== 0) this.bit(0);
    return this;
  }

  /** Appends whole bytes; the writer must be byte aligned. */
  bytes(data: Uint8Array): this {
    if (this.bitCount !== 0) throw new Error('BitWriter.bytes requires byte alignment');
    this.reserve(data.length);
    this.buf.set(data, this.length);
    this.length += data.length;
    return this;
  }

  /** Writes rbsp_trailing_bits (a stop bit then zero alignment). */
  trailing(): this {
    return this.bit(1).alignZero();
  }

  /** Returns the bytes written so far; the writer must be byte aligned. */
  toBuffer(): Buffer {
    if (this.bitCount !== 0) throw new Error('BitWriter is not byte aligned');
    return Buffer.from(this.buf.subarray(0, this.length));
  }

  private bit(b: number): this {
    this.current = (this.current << 1) | b;
    if (++this.bitCount === 8) {
      this.reserve(1);
      this.buf[this.length++] = this.current;
      this.current = 0;
      this.bitCount = 0;
    }
    return this;
  }

  private reserve(extra: number): void {
    if (this.length + extra <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.length + extra));
    grown.set(this.buf.subarray(0, this.length));
    this.buf = grown;
  }
}

/** Wraps an RBSP into a NAL unit, inserting emulation-prevention bytes where required. */
export function nalUnit(nalRefIdc: number, nalType: number, rbsp: Buffer): Buffer {
  const out = Buffer.alloc(1 + rbsp.length + Math.ceil(rbsp.length / 2));
  out[0] = (nalRefIdc << 5) | nalType;
  let n = 1;
  let zeros = 0;
  for (const byte of rbsp) {
    // 0x000000..0x000003 must not appear inside a NAL unit payload.
    if (zeros >= 2 && byte <= 3) {
      out[n++] = 3;
      zeros = 0;
    }
    out[n++] = byte;
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return out.subarray(0, n);
}

/** [level_idc, MaxFS (macroblocks), MaxMBPS] from Table A-1, ascending. */
const LEVELS: readonly (readonly [number, number, number])[] = [
  [10, 99, 1485],
  [11, 396, 3000],
  [12, 396, 6000],
  [13, 396, 11880],
  [20, 396, 11880],
  [21, 792, 19800],
  [22, 1620, 20250],
  [30, 1620, 40500],
  [31, 3600, 108000],
  [32, 5120, 216000],
  [40, 8192, 245760],
  [42, 8704, 522240],
  [50, 22080, 589824],
  [51, 36864, 983040],
  [52, 36864, 2073600],
];

/** Picks the lowest level whose frame size and macroblock rate limits fit. */
function chooseLevel(mbWidth: number, mbHeight: number, fps: number): number {
  const frameMbs = mbWidth * mbHeight;
  for (const [level, maxFs, maxMbps] of LEVELS) {
    const maxDim = Math.sqrt(maxFs * 8); // A.3.1: each dimension <= sqrt(8 * MaxFS)
    if (frameMbs <= maxFs && mbWidth <= maxDim && mbHeight <= maxDim && frameMbs * fps <= maxMbps) {
      return level;
    }
  }
  return 52;
}

function buildSps(mbWidth: number, mbHeight: number, cropRight: number, cropBottom: number, level: number): Buffer {
  const w = new BitWriter()
    .u(8, PROFILE_BASELINE)
    .u(8, CONSTRAINT_FLAGS)
    .u(8, level)
    .ue(0) // seq_parameter_set_id
    .ue(LOG2_MAX_FRAME_NUM - 4)
    .ue(2) // pic_order_cnt_type 2: output order = decoding order, no POC syntax in slices
    .ue(1) // max_num_ref_frames
    .u(1, 0) // gaps_in_frame_num_value_allowed_flag
    .ue(mbWidth - 1)
    .ue(mbHeight - 1)
    .u(1, 1) // frame_mbs_only_flag
    .u(1, 1); // direct_8x8_inference_flag
  if (cropRight > 0 || cropBottom > 0) {
    // Offsets are in 2-sample units for 4:2:0 progressive video.
    w.u(1, 1)
      .ue(0)
      .ue(cropRight / 2)
      .ue(0)
      .ue(cropBottom / 2);
  } else {
    w.u(1, 0);
  }
  // VUI carrying only bitstream_restriction, so decoders know no frame reordering happens
  // and can output each frame immediately instead of guessing a reorder depth.
  w.u(1, 1) // vui_parameters_present_flag
    .u(1, 0) // aspect_ratio_info_present_flag
    .u(1, 0) // overscan_info_present_flag
    .u(1, 0) // video_signal_type_present_flag
    .u(1, 0) // chroma_loc_info_present_flag
    .u(1, 0) // timing_info_present_flag (the MP4 carries timing)
    .u(1, 0) // nal_hrd_parameters_present_flag
    .u(1, 0) // vcl_hrd_parameters_present_flag
    .u(1, 0) // pic_struct_present_flag
    .u(1, 1) // bitstream_restriction_flag
    .u(1, 1) // motion_vectors_over_pic_boundaries_flag
    .ue(0) // max_bytes_per_pic_denom
    .ue(0) // max_bits_per_mb_denom
    .ue(16) // log2_max_mv_length_horizontal
    .ue(16) // log2_max_mv_length_vertical
    .ue(0) // max_num_reorder_frames
    .ue(1); // max_dec_frame_buffering
  return nalUnit(3, NAL_SPS, w.trailing().toBuffer());
}

function buildPps(): Buffer {
  const w = new BitWriter()
    .ue(0) // pic_parameter_set_id
    .ue(0) // seq_parameter_set_id
    .u(1, 0) // entropy_coding_mode_flag: CAVLC
    .u(1, 0) // bottom_field_pic_order_in_frame_present_flag
    .ue(0) // num_slice_groups_minus1
    .ue(0) // num_ref_idx_l0_default_active_minus1
    .ue(0) // num_ref_idx_l1_default_active_minus1
    .u(1, 0) // weighted_pred_flag
    .u(2, 0) // weighted_bipred_idc
    .se(0) // pic_init_qp_minus26
    .se(0) // pic_init_qs_minus26
    .se(0) // chroma_qp_index_offset
    .u(1, 1) // deblocking_filter_control_present_flag, so slices can switch it off
    .u(1, 0) // constrained_intra_pred_flag
    .u(1, 0); // redundant_pic_cnt_present_flag
  return nalUnit(3, NAL_PPS, w.trailing().toBuffer());
}

/**
 * coeff_token for TotalCoeff = 0, TrailingOnes = 0 (Table 9-5), selected by the nC
 * context: '1', '11', '1111' or the 6-bit fixed-length code '000011'.
 */
function writeZeroCoeffToken(w: BitWriter, nC: number): void {
  if (nC < 2) w.u(1, 0b1);
  else if (nC < 4) w.u(2, 0b11);
  else if (nC < 8) w.u(4, 0b1111);
  else w.u(6, 0b000011);
}

/** HSV (all 0..1) to BT.601 limited-range Y'CbCr, as stored in I_PCM samples. */
function hsvToYcbcr(h: number, s: number, v: number): [number, number, number] {
  const i = Math.floor(h * 6);
  const f = h * 6 - i;
  const p = v * (1 - s);
  const q = v * (1 - f * s);
  const t = v * (1 - (1 - f) * s);
  const rgb = [
    [v, t, p],
    [q, v, p],
    [p, v, t],
    [p, q, v],
    [t, p, v],
    [v, p, q],
  ][((i % 6) + 6) % 6]!;
  const [r, g, b] = rgb as [number, number, number];
  return [
    Math.round(16 + 65.481 * r + 128.553 * g + 24.966 * b),
    Math.round(128 - 37.797 * r - 74.203 * g + 112 * b),
    Math.round(128 + 112 * r - 93.786 * g - 18.214 * b),
  ];
}

/** A flat-coloured I_PCM macroblock payload: 256 luma then 64 Cb and 64 Cr samples. */
function pcmBlock([y, cb, cr]: [number, number, number]): Uint8Array {
  const block = new Uint8Array(384);
  block.fill(y, 0, 256).fill(cb, 256, 320).fill(cr, 320, 384);
  return block;
}

function buildIdr(mbWidth: number, mbHeight: number, seed: number): Buffer {
  const w = new BitWriter()
    .ue(0) // first_mb_in_slice
    .ue(7) // slice_type: I (all slices of the picture)
    .ue(0) // pic_parameter_set_id
    .u(LOG2_MAX_FRAME_NUM, 0) // frame_num
    .ue(0) // idr_pic_id
    .u(1, 0) // no_output_of_prior_pics_flag
    .u(1, 0) // long_term_reference_flag
    .se(0) // slice_qp_delta
    .ue(1); // disable_deblocking_filter_idc: keep the decoded colours exactly as coded

  const next = mulberry32(seed);
  const hue = next();
  const topSpan = Math.max(1, mbWidth - 1);
  const leftSpan = Math.max(1, mbHeight - 1);
  const isPcm = (x: number, y: number): boolean => x === 0 || y === 0;
  for (let y = 0; y < mbHeight; y++) {
    for (let x = 0; x < mbWidth; x++) {
      if (isPcm(x, y)) {
        // Top row sweeps half the hue circle, left column the other half.
        const h = y === 0 ? hue + (0.5 * x) / topSpan : hue + 0.5 + (0.5 * y) / leftSpan;
        w.ue(MB_I_PCM)
          .alignZero()
          .bytes(pcmBlock(hsvToYcbcr(h % 1, 0.75, 0.9)));
        continue;
      }
      w.ue(MB_I16X16_DC_NO_RESIDUAL)
        .ue(0) // intra_chroma_pred_mode: DC
        .se(0); // mb_qp_delta (always present for Intra_16x16)
      // Intra16x16DCLevel is always coded. nC comes from the 4x4 blocks left of and above
      // luma block 0 (9.2.1): I_PCM neighbours count as 16 coefficients, our other
      // macroblocks as 0 (no AC coded). Both neighbours exist here since x, y >= 1.
      const nA = isPcm(x - 1, y) ? 16 : 0;
      const nB = isPcm(x, y - 1) ? 16 : 0;
      writeZeroCoeffToken(w, (nA + nB + 1) >> 1);
    }
  }
  return nalUnit(3, NAL_IDR, w.trailing().toBuffer());
}

function buildSkipFrame(frameNum: number, mbCount: number): Buffer {
  const w = new BitWriter()
    .ue(0) // first_mb_in_slice
    .ue(5) // slice_type: P (all slices of the picture)
    .ue(0) // pic_parameter_set_id
    .u(LOG2_MAX_FRAME_NUM, frameNum)
    .u(1, 0) // num_ref_idx_active_override_flag
    .u(1, 0) // ref_pic_list_modification_flag_l0
    .u(1, 0) // adaptive_ref_pic_marking_mode_flag: sliding window
    .se(0) // slice_qp_delta
    .ue(1) // disable_deblocking_filter_idc
    .ue(mbCount); // mb_skip_run covering the whole picture
  return nalUnit(2, NAL_SLICE, w.trailing().toBuffer());
}

/** Encodes a static H.264 Constrained Baseline stream: one IDR frame then P_Skip frames. */
export function encodeH264(opts: H264Options): H264Stream {
  const { width, height, frameCount, seed } = opts;
  for (const [name, v] of [
    ['width', width],
    ['height', height],
  ] as const) {
    // 4:2:0 cropping works in 2-sample units, so odd sizes cannot be represented.
    if (!Number.isInteger(v) || v < 2 || v % 2 !== 0)
      throw new RangeError(`${name} must be an even integer >= 2, got ${v}`);
  }
  if (!Number.isInteger(frameCount) || frameCount < 1) throw new RangeError(`invalid frameCount ${frameCount}`);
  const mbWidth = Math.ceil(width / 16);
  const mbHeight = Math.ceil(height / 16);
  const levelIdc = chooseLevel(mbWidth, mbHeight, opts.fps ?? 30);

  const frames: Buffer[] = [buildIdr(mbWidth, mbHeight, seed)];
  // frame_num cycles with period MaxFrameNum, so only that many distinct P slices exist.
  const maxFrameNum = 1 << LOG2_MAX_FRAME_NUM;
  const skipFrames = new Map<number, Buffer>();
  for (let i = 1; i < frameCount; i++) {
    const frameNum = i % maxFrameNum;
    let frame = skipFrames.get(frameNum);
    if (frame === undefined) {
      frame = buildSkipFrame(frameNum, mbWidth * mbHeight);
      skipFrames.set(frameNum, frame);
    }
    frames.push(frame);
  }
  return {
    sps: buildSps(mbWidth, mbHeight, mbWidth * 16 - width, mbHeight * 16 - height, levelIdc),
    pps: buildPps(),
    profileIdc: PROFILE_BASELINE,
    profileCompatibility: CONSTRAINT_FLAGS,
    levelIdc,
    frames,
  };
}
