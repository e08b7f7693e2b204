import { deflateSync } from 'node:zlib';
import { mulberry32 } from '../lib/prng.js';

/** Number of horizontal colour bands; every row inside a band is identical. */
const BANDS = 8;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

// zlib.crc32 only exists from Node 22, so PNG chunk CRCs use a classic table.
const CRC_TABLE = buildCrcTable();

function buildCrcTable(): Uint32Array {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
}

/** Computes the CRC-32 (ISO 3309, as used by PNG and gzip) of the given bytes. */
export function crc32(data: Uint8Array, start = 0, end = data.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  // The CRC covers the chunk type and data, not the length.
  out.writeUInt32BE(crc32(out, 4, 8 + data.length), 8 + data.length);
  return out;
}

/** Encodes a deterministic, non-blank 8-bit RGB PNG whose colours derive from the seed. */
export function encodePng(width: number, height: number, seed: number): Buffer {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`invalid PNG size ${width}x${height}`);
  }
  const next = mulberry32(seed);
  const palette = [0, 1, 2].map(() => [next() * 255, next() * 255, next() * 255] as const);

  const stride = 1 + width * 3;
  // Zero-filled, so every row not written below is filter type 0 with zero bytes; we set
  // filter type 2 (Up) on repeated rows, whose residual against the row above is all zeros.
  // That keeps generation O(bands * width) and makes deflate's job trivial.
  const raw = Buffer.alloc(stride * height);
  const bandHeight = Math.max(1, Math.ceil(height / BANDS));
  const span = Math.max(1, width - 1);
  for (let y = 0; y < height; y++) {
    const rowStart = y * stride;
    if (y % bandHeight !== 0) {
      raw[rowStart] = 2;
      continue;
    }
    const band = y / bandHeight;
    const from = palette[band % 3]!;
    const to = palette[(band + 1) % 3]!;
    raw[rowStart] = 0;
    for (let x = 0; x < width; x++) {
      const t = x / span;
      const p = rowStart + 1 + x * 3;
      raw[p] = from[0] + (to[0] - from[0]) * t;
      raw[p + 1] = from[1] + (to[1] - from[1]) * t;
      raw[p + 2] = from[2] + (to[2] - from[2]) * t;
    }
  }

  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: truecolour RGB
  ihdr[10] = 0; // compression method
  ihdr[11] = 0; // filter method
  ihdr[12] = 0; // no interlace

  return Buffer.concat([
    PNG_SIGNATURE,
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 1 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
