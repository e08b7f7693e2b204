import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { audioInfo, mp4Info, pngSize } from '../../src/verdict/media.js';
import { encodeMp3 } from '../../src/media/mp3.js';
import { encodeMp4 } from '../../src/media/mp4.js';
import { encodePng } from '../../src/media/png.js';

const suite = JSON.parse(readFileSync(new URL('../../conformance/suite.json', import.meta.url), 'utf8')) as {
  values: { png: string };
};

test('pngSize: reads the size of a PNG, explains what is not one', () => {
  assert.equal(pngSize(Buffer.from(suite.values.png, 'base64')), { width: 64, height: 64 });
  assert.equal(pngSize(encodePng(40, 30, 1)), { width: 40, height: 30 });
  assert.match(pngSize(Buffer.from('GIF89a')) as string, /not a PNG/);
  assert.match(
    pngSize(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0])) as string,
    /unreadable PNG/,
  );
});

test('mp4Info: brand, duration from the movie header, size from the track header', () => {
  const info = mp4Info(encodeMp4({ width: 64, height: 48, durationSeconds: 2, seed: 1, fps: 8 }));
  assert.ok(typeof info !== 'string');
  assert.is(info.width, 64);
  assert.is(info.height, 48);
  assert.ok(Math.abs(info.seconds - 2) < 0.2, String(info.seconds));
  assert.match(mp4Info(Buffer.from('not a video at all')) as string, /no ftyp/);
  const ftypOnly = Buffer.concat([Buffer.from([0, 0, 0, 16]), Buffer.from('ftypisom'), Buffer.alloc(4)]);
  assert.match(mp4Info(ftypOnly) as string, /no movie header/);
});

test('audioInfo: a real MP3 decodes with a positive duration; garbage does not', async () => {
  const mp3 = await audioInfo(encodeMp3(1), 'audio/mpeg');
  assert.ok(typeof mp3 !== 'string' && /MPEG/.test(mp3.container) && mp3.seconds > 0.9);
  const bad = await audioInfo(Buffer.alloc(64), 'audio/wav');
  assert.type(bad, 'string');
});

test.run();
