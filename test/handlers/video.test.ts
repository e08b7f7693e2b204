import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { assertError, assertSchema, get, mp4Info, pathOf, post, useMock, VALID, withMock } from '../support/index.js';

const mock = useMock(test);
const PATH = pathOf('video.generate');
const limits = JSON.parse(readFileSync(new URL('../../fixtures/limits.json', import.meta.url), 'utf8')) as {
  video: { defaultDuration: number; defaultResolution: string };
};

/** Fetches a task's MP4 and reads it with mp4box: the video track's size and the movie's duration. */
async function movie(url: string, link: string) {
  const res = await get(url, new URL(link).pathname, null);
  assert.is(res.status, 200);
  assert.is(res.headers['content-type'], 'video/mp4');
  const info = mp4Info(res.bytes);
  assert.is(info.videoTracks.length, 1);
  assert.is(info.tracks.length, 1);
  const track = info.videoTracks[0]!;
  return {
    width: track.video!.width,
    height: track.video!.height,
    seconds: info.duration / info.timescale,
    codec: track.codec,
    samples: track.nb_samples,
  };
}

test('a completed task whose URL serves a real MP4 with the documented defaults (4 s, 1280x768)', async () => {
  const { url } = mock();
  assert.is(limits.video.defaultDuration, 4);
  assert.is(limits.video.defaultResolution, '1280x768');
  const res = await post(url, PATH, VALID['video.generate']);
  assert.is(res.status, 200);
  assertSchema('video-task.json', res.json);
  assert.is(res.json.status, 'completed');
  assert.is(res.json.model, 'gen3a_turbo');
  assert.is(res.json.mode, 'text_to_video');
  assert.is(res.json.created_at, 1767225600);
  assert.match(res.json.id, /^vid_[A-Za-z0-9]{24}$/);
  assert.is(res.json.video.duration, 4);
  assert.is(res.json.video.resolution, '1280x768');
  const m = await movie(url, res.json.video.url);
  assert.is(m.width, 1280);
  assert.is(m.height, 768);
  assert.ok(Math.abs(m.seconds - 4) < 0.05, `${m.seconds} s`);
  assert.match(m.codec, /^avc1\./);
  assert.ok(m.samples > 1);
});

test('the MP4 has the requested resolution and duration', async () => {
  const { url } = mock();
  const cases: [string, number][] = [
    ['768x768', 4],
    ['1280x768', 8],
    ['768x1280', 16],
  ];
  for (const [resolution, duration] of cases) {
    const res = await post(url, PATH, { ...VALID['video.generate'], resolution, duration });
    assertSchema('video-task.json', res.json);
    assert.equal([res.json.video.resolution, res.json.video.duration], [resolution, duration]);
    const m = await movie(url, res.json.video.url);
    assert.is(`${m.width}x${m.height}`, resolution);
    assert.ok(Math.abs(m.seconds - duration) < 0.05, `${resolution} ${duration}: ${m.seconds} s`);
  }
});

test('image_to_video with image_url gives a task in that mode', async () => {
  const { url } = mock();
  const res = await post(url, PATH, {
    ...VALID['video.generate'],
    mode: 'image_to_video',
    image_url: 'https://example.com/start.png',
  });
  assert.is(res.status, 200);
  assertSchema('video-task.json', res.json);
  assert.is(res.json.mode, 'image_to_video');
});

test('a seed is used as given (made a non-negative integer) and appears in the URL', async () => {
  const { url } = mock();
  const a = await post(url, PATH, { ...VALID['video.generate'], seed: 1234 });
  assert.is(a.json.video.seed, 1234);
  assert.match(a.json.video.url, /\/1234\.mp4$/);
  const b = await post(url, PATH, { ...VALID['video.generate'], seed: -7.9 });
  assert.is(b.json.video.seed, 7);
  assertSchema('video-task.json', b.json);
  const c = await post(url, PATH, { ...VALID['video.generate'], prompt: 'another' });
  assert.is.not(c.json.video.seed, (await post(url, PATH, VALID['video.generate'])).json.video.seed);
});

test('the task can be read back by id, on both path forms; an unknown id is a 404', async () => {
  const { url } = mock();
  const created = await post(url, PATH, VALID['video.generate']);
  for (const prefix of ['', '/v1']) {
    const polled = await get(url, `${prefix}${PATH}/${created.json.id}`);
    assert.is(polled.status, 200);
    assertSchema('video-task.json', polled.json);
    assert.equal(polled.json, created.json);
  }
  const missing = await get(url, `${PATH}/vid_nothing`);
  assertError(missing, 404, 'id');
  assert.is(missing.json.error.code, 'task_not_found');
});

test('with video.progress the task moves queued -> generating -> completed, one step per poll', async () => {
  await withMock({ video: { progress: true } }, async ({ url }) => {
    const created = await post(url, PATH, VALID['video.generate']);
    assertSchema('video-task.json', created.json);
    assert.is(created.json.status, 'queued');
    assert.is(created.json.video, null);
    const states: string[] = [];
    for (let i = 0; i < 3; i++) {
      const polled = await get(url, `${PATH}/${created.json.id}`);
      assertSchema('video-task.json', polled.json);
      states.push(polled.json.status);
      if (polled.json.status === 'completed') assert.is(polled.json.video.content_type, 'video/mp4');
      else assert.is(polled.json.video, null);
    }
    assert.equal(states, ['generating', 'completed', 'completed']);
  });
});

test('a model that is not a video model is a 400 that lists the video models', async () => {
  const { url } = mock();
  const res = await post(url, PATH, { ...VALID['video.generate'], model: 'dall-e-3' });
  assertError(res, 400, 'model');
  for (const m of ['gen3a_turbo', 'gen4_turbo', 'luma/ray-2']) assert.ok(res.json.error.message.includes(m), m);
});

test.run();
