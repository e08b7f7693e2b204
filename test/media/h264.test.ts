import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BitWriter, encodeH264, nalUnit } from '../../src/media/h264.js';

/** Renders the writer's content (padded to a byte) as a bit string for comparison. */
function bits(w: BitWriter): string {
  return [...w.alignZero().toBuffer()].map((b) => b.toString(2).padStart(8, '0')).join('');
}

test('Exp-Golomb codes match the H.264 spec table (9.1)', () => {
  assert.is(bits(new BitWriter().ue(0).ue(1).ue(2).ue(3)), '1010011001000000');
  assert.is(bits(new BitWriter().ue(25)), '0000110100000000');
  // se(v) mapping (Table 9-3): 1 -> codeNum 1, -1 -> 2, 2 -> 3, 0 -> 0.
  assert.is(bits(new BitWriter().se(1).se(-1).se(2).se(0)), '0100110010010000');
});

test('byte writes require alignment', () => {
  assert.throws(() => new BitWriter().u(1, 1).bytes(new Uint8Array(1)));
  assert.throws(() => new BitWriter().u(3, 5).toBuffer());
  const grown = new BitWriter().bytes(new Uint8Array(1000).fill(7)).u(8, 9).toBuffer();
  assert.is(grown.length, 1001);
  assert.is(grown[1000], 9);
});

test('emulation prevention inserts 0x03 before 0x000000..0x000003', () => {
  const nal = nalUnit(3, 5, Buffer.from([0, 0, 0, 0, 0, 1, 0, 0, 4, 0, 0, 3]));
  assert.equal([...nal], [0x65, 0, 0, 3, 0, 0, 3, 0, 1, 0, 0, 4, 0, 0, 3, 3]);
});

test('stream layout: SPS/PPS headers, one IDR then P slices', () => {
  const s = encodeH264({ width: 1280, height: 768, frameCount: 40, seed: 1 });
  assert.equal([...s.sps.subarray(0, 4)], [0x67, 66, 0xc0, 32]); // level 3.2 for 3840 macroblocks
  assert.is(s.pps[0], 0x68);
  assert.is(s.frames.length, 40);
  assert.is(s.frames[0]![0]! & 0x1f, 5);
  for (const f of s.frames.slice(1)) assert.is(f[0]! & 0x1f, 1);
  // P_Skip frames are a handful of bytes; the IDR is dominated by the I_PCM border.
  assert.ok(s.frames[1]!.length < 16);
  // Each I_PCM macroblock is 384 samples plus its mb_type and alignment (< 2 bytes); each
  // interior I_16x16 macroblock is 8 bits or 13 bits next to the border.
  const pcm = 80 + 47;
  const interior = 79 * 47;
  const size = s.frames[0]!.length;
  assert.ok(size > pcm * 384 + interior && size < pcm * 386 + interior * 2, `IDR ${size} bytes`);
  assert.is(encodeH264({ width: 128, height: 96, frameCount: 1, seed: 1 }).levelIdc, 10);
  assert.is(encodeH264({ width: 176, height: 144, frameCount: 1, seed: 1, fps: 15 }).levelIdc, 10);
  assert.is(encodeH264({ width: 176, height: 144, frameCount: 1, seed: 1 }).levelIdc, 11);
  assert.is(encodeH264({ width: 8192, height: 8192, frameCount: 1, seed: 1 }).levelIdc, 52);
});

test('rejects invalid sizes and frame counts', () => {
  assert.throws(() => encodeH264({ width: 15, height: 16, frameCount: 1, seed: 1 }), RangeError);
  assert.throws(() => encodeH264({ width: 16, height: 16, frameCount: 0, seed: 1 }), RangeError);
});

test.run();
