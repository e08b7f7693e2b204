import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { assertError, get, mp4Info, pngSize, useMock } from '../support/index.js';

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

/** An image link and a video download: both take byte ranges. */
const RANGED = [
  { path: '/media/images/1024x1792/12345.png', type: 'image/png' },
  { path: '/media/videos/768x1280/8/99.mp4', type: 'video/mp4' },
];

test('media links answer byte ranges: 206 with Content-Range and exactly those bytes, the media headers kept', async () => {
  const { url } = mock();
  for (const { path, type } of RANGED) {
    const whole = await get(url, path, null);
    assert.is(whole.status, 200, path);
    assert.is(whole.headers['accept-ranges'], 'bytes', path);
    assert.is(whole.headers['content-range'], undefined, path);
    const total = whole.bytes.length;
    assert.ok(total > 100, path);
    const cases: [string, number, number][] = [
      ['bytes=0-99', 0, 99],
      ['bytes=-10', total - 10, total - 1],
      [`bytes=${total - 5}-`, total - 5, total - 1],
      [`bytes=100-${total + 1000}`, 100, total - 1], // an end past the last byte is cut to it
    ];
    for (const [range, start, end] of cases) {
      const part = await get(url, path, null, { range });
      const at = `${path} ${range}`;
      assert.is(part.status, 206, at);
      assert.is(part.headers['content-range'], `bytes ${start}-${end}/${total}`, at);
      assert.is(part.headers['content-length'], String(end - start + 1), at);
      assert.ok(part.bytes.equals(whole.bytes.subarray(start, end + 1)), `${at}: the bytes ${start}-${end}`);
      assert.is(part.headers['accept-ranges'], 'bytes', at);
      assert.is(part.headers['content-type'], type, at);
      assert.is(part.headers['cache-control'], 'public, max-age=3600', at);
    }
    // Several ranges and If-Range get the whole body, as on the body endpoint.
    for (const headers of [{ range: 'bytes=0-1,5-6' }, { range: 'bytes=0-9', 'if-range': '"x"' }]) {
      const res = await get(url, path, null, headers);
      assert.is(res.status, 200, `${path} ${JSON.stringify(headers)}`);
      assert.ok(res.bytes.equals(whole.bytes), path);
    }
  }
});

test('a range past the end of a media file is a 416 with Content-Range bytes */length, in the error envelope', async () => {
  const { url } = mock();
  for (const { path } of RANGED) {
    const total = (await get(url, path, null)).bytes.length;
    for (const range of [`bytes=${total}-`, 'bytes=99999999-', 'bytes=-0']) {
      const refused = await get(url, path, null, { range });
      assertError(refused, 416, null);
      assert.is(refused.json.error.code, 'range_not_satisfiable', `${path} ${range}`);
      assert.is(refused.headers['content-range'], `bytes */${total}`, `${path} ${range}`);
    }
  }
});

test('HEAD of a media link carries the same headers as GET, without the bytes', async () => {
  const { url } = mock();
  for (const { path } of RANGED) {
    const statuses: number[] = [];
    for (const range of [undefined, 'bytes=0-99', 'bytes=-10', 'bytes=99999999-']) {
      const headers: Record<string, string> = range ? { range } : {};
      const got = await fetch(url + path, { headers });
      await got.arrayBuffer();
      const head = await fetch(url + path, { method: 'HEAD', headers });
      statuses.push(head.status);
      const at = `${path} ${String(range)}`;
      assert.is(head.status, got.status, at);
      for (const name of ['content-type', 'content-length', 'content-range', 'accept-ranges', 'cache-control']) {
        assert.is(head.headers.get(name), got.headers.get(name), `${at}: ${name}`);
      }
      assert.is((await head.arrayBuffer()).byteLength, 0, at);
    }
    assert.equal(statuses, [200, 206, 206, 416], path);
  }
});

test.run();
