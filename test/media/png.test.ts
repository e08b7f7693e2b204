import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PNG } from 'pngjs';
import { encodePng } from '../../src/media/png.js';

for (const [width, height] of [
  [1024, 1024],
  [1792, 1024],
  [1024, 1792],
  [1, 1],
  [3, 7],
] as const) {
  test(`pngjs decodes a ${width}x${height} PNG with verified CRCs`, () => {
    // pngjs checks every chunk CRC and the zlib stream's Adler-32 by default.
    const png = PNG.sync.read(encodePng(width, height, 42));
    assert.is(png.width, width);
    assert.is(png.height, height);
    assert.is(png.data.length, width * height * 4);
  });
}

test('decoded PNG is an opaque RGB image that is not blank', () => {
  const buf = encodePng(1024, 1024, 5);
  assert.is(buf[25], 2, 'IHDR colour type 2 (RGB)');
  assert.is(buf[24], 8, 'IHDR bit depth 8');
  const { data } = PNG.sync.read(buf);
  const colours = new Set<number>();
  for (let i = 0; i < data.length; i += 4 * 997) colours.add(data.readUInt32BE(i));
  assert.ok(colours.size > 10, `expected a pattern, got ${colours.size} colours`);
  for (let i = 3; i < data.length; i += 4 * 4099) assert.is(data[i], 255);
});

test('same arguments give identical bytes; a different seed gives different bytes', () => {
  const a = encodePng(1792, 1024, 123);
  assert.ok(a.equals(encodePng(1792, 1024, 123)));
  assert.not.ok(a.equals(encodePng(1792, 1024, 124)));
  const pixelsA = PNG.sync.read(a).data;
  const pixelsB = PNG.sync.read(encodePng(1792, 1024, 124)).data;
  assert.not.ok(pixelsA.equals(pixelsB), 'the decoded pictures differ too');
});

test('rejects invalid sizes', () => {
  assert.throws(() => encodePng(0, 10, 1), RangeError);
  assert.throws(() => encodePng(10, 1.5, 1), RangeError);
});

test.run();
