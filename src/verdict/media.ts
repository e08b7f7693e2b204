import { imageSize } from 'image-size';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A PNG's width and height, or the reason it is not a readable PNG. */
export function pngSize(bytes: Buffer): { width: number; height: number } | string {
  if (!bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return 'not a PNG (no PNG signature)';
  try {
    // A copy of its own: image-size reads through the buffer's backing store.
    const { width, height } = imageSize(new Uint8Array(bytes));
    return { width, height };
  } catch (err) {
    return `unreadable PNG: ${(err as Error).message}`;
  }
}

/** An MP4's container facts: the major brand, the movie duration in seconds and the first video track's size. */
interface Mp4Info {
  brand: string;
  seconds: number;
  width?: number;
  height?: number;
}

/** The boxes (type, body) in a stretch of an ISO BMFF file. */
function* boxes(buf: Buffer, start: number, end: number): Generator<{ type: string; body: Buffer }> {
  let at = start;
  while (at + 8 <= end) {
    let size = buf.readUInt32BE(at);
    let header = 8;
    if (size === 1 && at + 16 <= end) {
      size = Number(buf.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) size = end - at;
    if (size < header || at + size > end) return;
    yield { type: buf.toString('latin1', at + 4, at + 8), body: buf.subarray(at + header, at + size) };
    at += size;
  }
}

const child = (body: Buffer, type: string) => [...boxes(body, 0, body.length)].find((b) => b.type === type)?.body;

/** Reads ftyp, moov/mvhd and the first track header of an MP4, or says why it cannot. */
export function mp4Info(bytes: Buffer): Mp4Info | string {
  const top = [...boxes(bytes, 0, bytes.length)];
  const ftyp = top.find((b) => b.type === 'ftyp');
  if (!ftyp || top[0]?.type !== 'ftyp') return 'not an MP4 (no ftyp box first)';
  const moov = top.find((b) => b.type === 'moov')?.body;
  const mvhd = moov && child(moov, 'mvhd');
  if (!mvhd || mvhd.length < 32) return 'no movie header (moov/mvhd)';
  const v1 = mvhd[0] === 1;
  const timescale = mvhd.readUInt32BE(v1 ? 20 : 12);
  const duration = v1 ? Number(mvhd.readBigUInt64BE(24)) : mvhd.readUInt32BE(16);
  if (!timescale) return 'movie header has a zero timescale';
  const info: Mp4Info = { brand: ftyp.body.toString('latin1', 0, 4), seconds: duration / timescale };
  for (const trak of [...boxes(moov!, 0, moov!.length)].filter((b) => b.type === 'trak')) {
    const tkhd = child(trak.body, 'tkhd');
    if (!tkhd || tkhd.length < 84) continue;
    const off = tkhd[0] === 1 ? 88 : 76; // width and height (16.16 fixed point) end the track header
    const width = tkhd.readUInt32BE(off) / 65536;
    const height = tkhd.readUInt32BE(off + 4) / 65536;
    if (width && height) return { ...info, width, height };
  }
  return info;
}

/** Decodes an audio file's container and duration with music-metadata (loaded on first use). */
export async function audioInfo(
  bytes: Buffer,
  mimeType: string,
): Promise<{ container: string; seconds: number } | string> {
  try {
    const { parseBuffer } = await import('music-metadata');
    const { format } = await parseBuffer(bytes, { mimeType }, { duration: true });
    if (!format.container) return 'not a decodable audio file';
    return { container: format.container, seconds: format.duration ?? 0 };
  } catch (err) {
    return `not a decodable audio file: ${(err as Error).message}`;
  }
}
