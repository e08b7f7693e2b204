import { requireCjs } from '../lib/require.js';
import type { imageSize as ImageSize } from 'image-size';
import { decodeBase64Prefix } from '../lib/base64.js';

/** Image formats this project accepts as input. */
type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

/** Dimensions and format of an image as read from its header. */
interface ImageInfo {
  width: number;
  height: number;
  format: ImageFormat;
}

const FORMAT_BY_TYPE: Readonly<Record<string, ImageFormat>> = {
  png: 'png',
  jpg: 'jpeg',
  gif: 'gif',
  webp: 'webp',
};

/**
 * Minimum byte length for each format's header to be complete; image-size reads fixed
 * offsets without bounds checks, so shorter input must be rejected here.
 */
function headerComplete(buf: Uint8Array, format: ImageFormat): boolean {
  switch (format) {
    case 'png':
      // signature (8) + IHDR length/type (8) + IHDR data (13) + CRC (4)
      return buf.length >= 33;
    case 'gif':
      // signature/version (6) + logical screen descriptor (7)
      return buf.length >= 13;
    case 'webp':
      // RIFF header (12) + chunk header (8) + the 10 bytes image-size reads
      return buf.length >= 30;
    case 'jpeg':
      // SOI + at least one marker; image-size walks the segments itself.
      return buf.length >= 4;
  }
}

let imageSize: typeof ImageSize | undefined;

/** Returns an image's width, height and format, or undefined if it is not a readable PNG, JPEG, GIF or WebP. */
export function readImageInfo(buf: Buffer): ImageInfo | undefined {
  if (!(buf instanceof Uint8Array) || buf.length < 4) return undefined;
  // Node pools small Buffers inside a shared ArrayBuffer, and image-size reads through a
  // DataView over `buf.buffer`, so an out-of-range read would silently return pool bytes
  // instead of throwing. An exactly-sized copy makes truncated input fail loudly.
  const exact = buf.byteOffset === 0 && buf.buffer.byteLength === buf.length ? buf : new Uint8Array(buf);
  try {
    // image-size (about 30 modules) loads on the first image read, not at every start-up.
    const size = (imageSize ??= (requireCjs('image-size') as { imageSize: typeof ImageSize }).imageSize)(exact);
    const format = size.type === undefined ? undefined : FORMAT_BY_TYPE[size.type];
    if (format === undefined || !headerComplete(exact, format)) return undefined;
    const { width, height } = size;
    if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
      return undefined;
    }
    return { width, height, format };
  } catch {
    return undefined;
  }
}

// PNG, GIF and WebP keep their size in the first 30 bytes; JPEG's frame header follows the metadata
// segments (EXIF, ICC), which are usually far smaller than this.
const HEADER_BYTES = 64 * 1024;

/**
 * readImageInfo for an image given as base64 (value[start..], already checked to be base64): decodes
 * only the first 64 KiB, and the whole image only when its size lies beyond that (a JPEG with large
 * metadata), so the usual cost does not grow with the image.
 */
export function readBase64ImageInfo(value: string, start = 0): ImageInfo | undefined {
  const head = decodeBase64Prefix(value, start, HEADER_BYTES);
  const info = readImageInfo(head);
  if (info || head.length < HEADER_BYTES) return info;
  return readImageInfo(Buffer.from(value.slice(start), 'base64'));
}
