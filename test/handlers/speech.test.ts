import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { assertError, audioInfo, pathOf, post, useMock, VALID } from '../support/index.js';

const mock = useMock(test);
const TTS = pathOf('voice.tts');
const SPEECH = pathOf('cloud.speech');
const limits = JSON.parse(readFileSync(new URL('../../fixtures/limits.json', import.meta.url), 'utf8')) as {
  speech: {
    charactersPerSecond: number;
    outputFormats: Record<string, { sampleRate: number; bitsPerSample: number; encoding: string }>;
  };
};
const CPS = limits.speech.charactersPerSecond;
const near = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} vs ${expected}`);
const words = (n: number) => 'abcdefghij'.repeat(n / 10);

test('voice tts: decodable MPEG audio with a character count', async () => {
  const { url } = mock();
  const res = await post(url, TTS, VALID['voice.tts']);
  assert.is(res.status, 200);
  assert.is(res.headers['content-type'], 'audio/mpeg');
  assert.is(res.headers['x-character-count'], '11');
  const { format } = await audioInfo(res.bytes, 'audio/mpeg');
  assert.is(format.container, 'MPEG');
  assert.match(String(format.codec), /Layer 3/);
  assert.ok(format.numberOfChannels === 1 || format.numberOfChannels === 2);
  near(format.duration!, 11 / CPS, 0.1, 'duration');
});

test('voice tts: the duration grows with the text; characters are counted as code points', async () => {
  const { url } = mock();
  const durations: number[] = [];
  for (const n of [30, 300, 2500]) {
    const res = await post(url, TTS, { ...VALID['voice.tts'], text: words(n) });
    assert.is(res.headers['x-character-count'], String(n));
    const { format } = await audioInfo(res.bytes, 'audio/mpeg');
    near(format.duration!, n / CPS, 0.1, `${n} characters`);
    durations.push(format.duration!);
  }
  assert.ok(durations[0]! < durations[1]! && durations[1]! < durations[2]!);
  const emoji = await post(url, TTS, { ...VALID['voice.tts'], text: '🎤'.repeat(30) });
  assert.is(emoji.headers['x-character-count'], '30');
});

test('voice tts: voice and model are checked against the catalogue', async () => {
  const { url } = mock();
  const voice = await post(url, TTS, { ...VALID['voice.tts'], voice_id: 'nobody' });
  assertError(voice, 400, 'voice_id');
  assert.match(voice.json.error.message, /rachel/);
  const model = await post(url, TTS, { ...VALID['voice.tts'], model_id: 'eleven_v9' });
  assertError(model, 400, 'model_id');
  assert.match(model.json.error.message, /eleven_multilingual_v2/);
  const ok = await post(url, TTS, { ...VALID['voice.tts'], model_id: 'eleven_turbo_v2_5' });
  assert.is(ok.status, 200);
});

test('cloud speech: RIFF WAV, 24 kHz, 16-bit, mono by default', async () => {
  const { url } = mock();
  const res = await post(url, SPEECH, VALID['cloud.speech']);
  assert.is(res.status, 200);
  assert.is(res.headers['content-type'], 'audio/wav');
  assert.is(res.bytes.toString('latin1', 0, 4), 'RIFF');
  assert.is(res.bytes.toString('latin1', 8, 12), 'WAVE');
  const { format } = await audioInfo(res.bytes, 'audio/wav');
  assert.is(format.container, 'WAVE');
  assert.is(format.sampleRate, 24000);
  assert.is(format.bitsPerSample, 16);
  assert.is(format.numberOfChannels, 1);
  near(format.duration!, 11 / CPS, 0.01, 'duration');
});

test('cloud speech: every riff-* X-Microsoft-OutputFormat is honoured', async () => {
  const { url } = mock();
  for (const [name, f] of Object.entries(limits.speech.outputFormats)) {
    const res = await post(url, SPEECH, VALID['cloud.speech'], undefined, {
      'X-Microsoft-OutputFormat': name.toUpperCase(),
    });
    assert.is(res.status, 200, name);
    assert.is(res.headers['x-microsoft-outputformat'], name);
    const { format } = await audioInfo(res.bytes, 'audio/wav');
    assert.is(format.container, 'WAVE', name);
    assert.is(format.sampleRate, f.sampleRate, name);
    assert.is(format.bitsPerSample, f.bitsPerSample, name);
    assert.is(format.numberOfChannels, 1, name);
    if (f.encoding !== 'pcm') assert.match(String(format.codec), new RegExp(f.encoding, 'i'), name);
    near(format.duration!, 11 / CPS, 0.01, name);
  }
});

test('cloud speech: other output formats are a 400 that lists the supported ones', async () => {
  const { url } = mock();
  for (const name of ['audio-24khz-48kbitrate-mono-mp3', 'ogg-24khz-16bit-mono-opus', 'riff-96khz-16bit-mono-pcm']) {
    const res = await post(url, SPEECH, VALID['cloud.speech'], undefined, { 'X-Microsoft-OutputFormat': name });
    assertError(res, 400, 'X-Microsoft-OutputFormat');
    assert.is(res.json.error.code, 'unsupported_output_format');
    for (const supported of Object.keys(limits.speech.outputFormats))
      assert.ok(res.json.error.message.includes(supported), supported);
  }
});

test('cloud speech: the duration follows the text length and the rate; pitch changes the sound, not the length', async () => {
  const { url } = mock();
  const seconds = async (body: Record<string, unknown>) =>
    (await audioInfo((await post(url, SPEECH, { ...VALID['cloud.speech'], ...body })).bytes, 'audio/wav')).format
      .duration!;
  const text = words(150);
  near(await seconds({ text }), 10, 0.01, 'rate 0');
  near(await seconds({ text: words(300) }), 20, 0.01, 'twice the text');
  near(await seconds({ text, rate: 50 }), 10 / 1.5, 0.01, 'rate +50');
  near(await seconds({ text, rate: -50 }), 20, 0.01, 'rate -50');
  const low = await post(url, SPEECH, { ...VALID['cloud.speech'], text, pitch: -50 });
  const high = await post(url, SPEECH, { ...VALID['cloud.speech'], text, pitch: 50 });
  assert.is(low.bytes.length, high.bytes.length);
  assert.not.ok(low.bytes.equals(high.bytes));
});

test('cloud speech: SSML is parsed; its voice and prosody win over the body', async () => {
  const { url } = mock();
  const ssml = (voice: string, rate: string, text: string) =>
    `<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xml:lang="en-US"><voice name="${voice}"><prosody rate="${rate}">${text}</prosody></voice></speak>`;
  const text = words(150);
  const plain = await post(url, SPEECH, { ...VALID['cloud.speech'], text });
  // Tags are not spoken: the same words in SSML at +0% last as long as the plain text.
  const same = await post(url, SPEECH, {
    ...VALID['cloud.speech'],
    text: ssml('en-US-JennyNeural', '+0%', text),
    rate: -50,
  });
  near((await audioInfo(same.bytes, 'audio/wav')).format.duration!, 10, 0.01, 'SSML +0% beats body rate -50');
  assert.ok(same.bytes.equals(plain.bytes), 'same voice, same words, same rate: same audio');
  const fast = await post(url, SPEECH, { ...VALID['cloud.speech'], text: ssml('en-US-JennyNeural', '+100%', text) });
  near((await audioInfo(fast.bytes, 'audio/wav')).format.duration!, 5, 0.01, 'SSML +100%');
  const ryan = await post(url, SPEECH, { ...VALID['cloud.speech'], text: ssml('en-GB-RyanNeural', '+0%', text) });
  assert.is(ryan.status, 200);
  assert.not.ok(ryan.bytes.equals(plain.bytes), 'the SSML voice is used');
  const unknown = await post(url, SPEECH, { ...VALID['cloud.speech'], text: ssml('xx-XX-NobodyNeural', '+0%', 'hi') });
  assertError(unknown, 400, 'voice');
});

test('cloud speech: SSML with an XML declaration is SSML too', async () => {
  const { url } = mock();
  const text = words(150);
  const res = await post(url, SPEECH, {
    ...VALID['cloud.speech'],
    text: `<?xml version="1.0" encoding="UTF-8"?>\n<speak version="1.0"><voice name="en-US-JennyNeural"><prosody rate="+100%">${text}</prosody></voice></speak>`,
  });
  assert.is(res.status, 200);
  near((await audioInfo(res.bytes, 'audio/wav')).format.duration!, 5, 0.01, 'prosody applied');
});

test('cloud speech: text that only starts like a tag is read as plain text', async () => {
  const { url } = mock();
  const res = await post(url, SPEECH, { ...VALID['cloud.speech'], text: '<speakers> are loud' });
  assert.is(res.status, 200);
  near((await audioInfo(res.bytes, 'audio/wav')).format.duration!, 19 / CPS, 0.01, 'all 19 characters spoken');
});

test('cloud speech: malformed SSML is a 400 naming text', async () => {
  const { url } = mock();
  for (const text of [
    '<speak><voice name="en-US-JennyNeural">unclosed</speak>',
    '<speak version="1.0"><prosody rate="+10%">no voice</prosody></speak>',
    '<?xml version="1.0"?><speak><voice>x</voice></speak>',
  ]) {
    const res = await post(url, SPEECH, { ...VALID['cloud.speech'], text });
    assertError(res, 400, 'text');
    assert.is(res.json.error.code, 'invalid_ssml', text);
  }
});

test.run();
