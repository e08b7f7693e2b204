import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodePng } from '../../src/media/png.js';
import { readBase64ImageInfo, readImageInfo } from '../../src/media/imageInfo.js';
import { tinyWebp } from '../support/index.js';

// Real 5x3 / 6x4 images written by ffmpeg (mjpeg, libwebp lossy and lossless).
const JPEG_5X3 = Buffer.from(
  '/9j/4AAQSkZJRgABAgAAAQABAAD//gAQTGF2YzU5LjM3LjEwMAD/2wBDAAgEBAQEBAUFBQUFBQYGBgYGBgYGBgYGBgYHBwcICAgHBwcGBgcHCAgICAkJCQgICAgJCQoKCgwMCwsODg4RERT/xABuAAEBAAAAAAAAAAAAAAAAAAADBQEAAwEAAAAAAAAAAAAAAAAAAgUDBhAAAQQBBAMBAAAAAAAAAAAAAQMFAgQSABEGtHYyExURAAEEAQIEBwEAAAAAAAAAAAIDBAEFBhETFACzBzd1NhIVdggh/8AAEQgAAwAFAwESAAISAAMSAP/aAAwDAQACEQMRAD8AludJtYfx40mxplFXjrFkLjbQcgDGsTumHKvZ+RmZykrJPEqy2KmRA0nLPZi8dZOrHWg7QivmGEa2j+3T4C7um7f4q2s6CNqVU/4tFC7YQ5mJHWDcbhxJFMTqZal+efQ777Fc9UeXmMsW11nGf1VkJP2eP2Teup03KiixsmZy5X4cVlDlc0xM5hKFVD2k4FJP2pgIxbBfE3u55+06K3P/2Q==',
  'base64',
);
const WEBP_LOSSY_5X3 = Buffer.from(
  'UklGRoIAAABXRUJQVlA4IHYAAACwAgCdASoFAAMAAgA0JbACdLoAkQD0AOlVBhMh0mAA/trX2mx/4xclAWHLPGV//B/t/+JpxBn0/75/0bXE7k3+FM0wp/9Qx/lf8YEqd9f+KeX5Mf1ovznezOu4nDyQ6N8IWGX/Uj13+zj6e4fQY/YA0C/swAAA',
  'base64',
);
const WEBP_LOSSLESS_6X4 = Buffer.from(
  'UklGRjwAAABXRUJQVlA4TDAAAAAvBcAAADcgEEjaH3qN+RcQFPk/2vwHskEkMChmJAnOWozAoEzm3wp7RPQ/yKBHXw8=',
  'base64',
);
// Hand-written 5x3 GIF89a (2-colour table, uncompressed-style LZW); ffmpeg decodes it.
const GIF_5X3 = Buffer.from('R0lGODlhBQADAIAAAP8AAAAA/ywAAAAABQADAAACDARDMARDMARDMARDFAA7', 'base64');

test('PNG from encodePng', () => {
  assert.equal(readImageInfo(encodePng(1792, 1024, 1)), { width: 1792, height: 1024, format: 'png' });
  assert.equal(readImageInfo(encodePng(1024, 1792, 1)), { width: 1024, height: 1792, format: 'png' });
});

test('JPEG, GIF and WebP samples', () => {
  assert.equal(readImageInfo(JPEG_5X3), { width: 5, height: 3, format: 'jpeg' });
  assert.equal(readImageInfo(GIF_5X3), { width: 5, height: 3, format: 'gif' });
  assert.equal(readImageInfo(WEBP_LOSSY_5X3), { width: 5, height: 3, format: 'webp' });
  assert.equal(readImageInfo(WEBP_LOSSLESS_6X4), { width: 6, height: 4, format: 'webp' });
  assert.equal(readImageInfo(tinyWebp(300, 200)), { width: 300, height: 200, format: 'webp' });
});

test('works on Buffers that are views into a larger ArrayBuffer', () => {
  const png = encodePng(20, 10, 1);
  const pooled = Buffer.concat([Buffer.alloc(7), png]).subarray(7);
  assert.equal(readImageInfo(pooled), { width: 20, height: 10, format: 'png' });
});

test('garbage and unsupported formats give undefined', () => {
  assert.is(readImageInfo(Buffer.alloc(0)), undefined);
  assert.is(readImageInfo(Buffer.from('hello world, this is not an image')), undefined);
  assert.is(readImageInfo(Buffer.alloc(1000, 0xab)), undefined);
  assert.is(readImageInfo(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>')), undefined);
  const bmp = Buffer.alloc(54);
  bmp.write('BM', 0, 'latin1');
  bmp.writeUInt32LE(40, 14);
  bmp.writeInt32LE(4, 18);
  bmp.writeInt32LE(4, 22);
  assert.is(readImageInfo(bmp), undefined, 'BMP is a valid image but not an accepted format');
  assert.is(readImageInfo('not a buffer' as unknown as Buffer), undefined);
});

test('truncated images give undefined', () => {
  const png = encodePng(64, 32, 9);
  // Buffer.from copies small inputs into Node's shared pool, the case where unchecked
  // reads would otherwise see unrelated bytes.
  for (const n of [4, 8, 16, 20, 24, 32])
    assert.is(readImageInfo(Buffer.from(png.subarray(0, n))), undefined, `png ${n}`);
  for (const n of [4, 100, 160]) assert.is(readImageInfo(Buffer.from(JPEG_5X3.subarray(0, n))), undefined, `jpeg ${n}`);
  for (const n of [6, 8, 12]) assert.is(readImageInfo(Buffer.from(GIF_5X3.subarray(0, n))), undefined, `gif ${n}`);
  for (const n of [12, 16, 24, 29]) {
    assert.is(readImageInfo(Buffer.from(WEBP_LOSSY_5X3.subarray(0, n))), undefined, `webp ${n}`);
    assert.is(readImageInfo(Buffer.from(tinyWebp(300, 200).subarray(0, n))), undefined, `webp vp8x ${n}`);
  }
});

test('corrupt headers give undefined', () => {
  const png = encodePng(8, 8, 1);
  png.write('XXXX', 12, 'latin1'); // IHDR chunk type destroyed
  assert.is(readImageInfo(png), undefined);
  const zeroSize = Buffer.from(GIF_5X3);
  zeroSize.writeUInt16LE(0, 6);
  assert.is(readImageInfo(zeroSize), undefined);
});

/** The JPEG sample with `count` 64 KiB comment segments before its frame header. */
function jpegWithMetadata(count: number): Buffer {
  const segment = Buffer.alloc(2 + 65535, 0x20);
  segment[0] = 0xff;
  segment[1] = 0xfe; // COM: skipped by readers, as large as a segment can be
  segment.writeUInt16BE(65535, 2);
  return Buffer.concat([
    JPEG_5X3.subarray(0, 2),
    ...Array.from({ length: count }, () => segment),
    JPEG_5X3.subarray(2),
  ]);
}

test('readBase64ImageInfo reads base64 and data-URI payloads like readImageInfo reads bytes', () => {
  const big = encodePng(1024, 512, 3);
  const padded = Buffer.concat([
    big.subarray(0, big.length - 12),
    Buffer.alloc(200_000, 1),
    big.subarray(big.length - 12),
  ]);
  for (const image of [encodePng(64, 32, 1), padded, JPEG_5X3, GIF_5X3, WEBP_LOSSY_5X3, WEBP_LOSSLESS_6X4]) {
    const b64 = image.toString('base64');
    assert.equal(readBase64ImageInfo(b64), readImageInfo(image));
    const uri = `data:image/x;base64,${b64}`;
    assert.equal(readBase64ImageInfo(uri, uri.indexOf(',') + 1), readImageInfo(image));
  }
});

test('readBase64ImageInfo finds a JPEG frame header beyond the first 64 KiB', () => {
  const jpeg = jpegWithMetadata(2);
  assert.ok(jpeg.indexOf(Buffer.from([0xff, 0xc0])) > 128 * 1024);
  assert.equal(readBase64ImageInfo(jpeg.toString('base64')), { width: 5, height: 3, format: 'jpeg' });
});

test('readBase64ImageInfo gives undefined for data that is no accepted image', () => {
  assert.is(readBase64ImageInfo(Buffer.alloc(100, 7).toString('base64')), undefined);
  assert.is(readBase64ImageInfo(Buffer.alloc(100_000, 7).toString('base64')), undefined);
  assert.is(readBase64ImageInfo(''), undefined);
});

test.run();
