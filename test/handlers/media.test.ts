import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { assertError, get, mp4Info, pngSize, useMock } from '../helpers.js';

const mock = useMock(test);

test('media images: a PNG of the size in the path, the same bytes for the same seed, cacheable, no key', async () => {
  const { url } = mock();
  const a = await get(url, '/media/images/1024x1792/12345.png', null);
  assert.is(a.status, 200);
  assert.is(a.headers['content-type'], 'image/png');
  assert.is(a.headers['cache-control'], 'public, max-age=3600');
  assert.equal(pngSize(a.bytes), { width: 1024, height: 1792 });
  const again = await get(url, '/v1/media/images/1024x1792/12345.png', null);
  assert.ok(again.bytes.equals(a.bytes));
  const other = await get(url, '/media/images/1024x1792/12346.png', null);
  assert.not.ok(other.bytes.equals(a.bytes));
});

test('media videos: an MP4 of the resolution and duration in the path', async () => {
  const { url } = mock();
  const res = await get(url, '/media/videos/768x1280/8/99.mp4', null);
  assert.is(res.status, 200);
  assert.is(res.headers['content-type'], 'video/mp4');
  const info = mp4Info(res.bytes);
  assert.equal([info.videoTracks[0]!.video!.width, info.videoTracks[0]!.video!.height], [768, 1280]);
  assert.ok(Math.abs(info.duration / info.timescale - 8) < 0.05);
});

test('unknown sizes, formats and file names are 404 envelopes', async () => {
  const { url } = mock();
  const paths = [
    '/media/images/512x512/1.png',
    '/media/images/1024x1024/abc.png',
    '/media/images/1024x1024/1.jpg',
    '/media/images/1024x1024/4294967296.png',
    '/media/images/1024x1024/12345678901.png',
    '/media/videos/1920x1080/4/1.mp4',
    '/media/videos/768x768/5/1.mp4',
    '/media/videos/768x768/4/1.mov',
    '/media/videos/768x768/4/x.mp4',
  ];
  for (const path of paths) {
    const res = await get(url, path, null);
    assertError(res, 404, null);
    assert.is(res.json.error.code, 'not_found', path);
  }
  assert.is((await get(url, '/media/images/1024x1024/4294967295.png', null)).status, 200);
});

test.run();
