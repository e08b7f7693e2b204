import { ApiError, ERRORS } from '../contract/errors.js';
import { digest, seedFrom } from '../lib/ids.js';
import type { Handler } from '../pipeline/handler.js';
import type { Services } from '../domain/services.js';

/** Characters as people count them (code points), the same measure as the schema's maxLength. */
const characterCount = (text: string): number => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

/** Seconds of speech for a text at a rate change in percent, within the configured bounds. */
function speechSeconds(services: Services, characters: number, ratePercent = 0): number {
  const { charactersPerSecond, minSeconds, maxSeconds } = services.limits.speech;
  const speed = Math.max(0.5, 1 + ratePercent / 100);
  return Math.min(maxSeconds, Math.max(minSeconds, characters / charactersPerSecond / speed));
}

/** POST /voice-provider/tts: a decodable MP3 whose duration grows with the text. */
export const voiceTts: Handler = ({ body, services, plan }) => {
  services.catalogue.requireVoice(body.voice_id as string);
  // model_id, when given, was checked once before the handler (pipeline/plan.ts).
  const model = plan.model;
  if (model) {
    const chars = characterCount(body.text as string);
    if (model.limits.max_characters !== undefined && chars > model.limits.max_characters) {
      throw new ApiError(ERRORS.VALIDATION, {
        param: 'text',
        code: 'string_above_max_length',
        message: `Invalid 'text': ${chars} characters exceed the limit of ${model.limits.max_characters} for model '${model.id}'.`,
      });
    }
  }
  const chars = characterCount(body.text as string);
  const seconds = speechSeconds(services, chars);
  const mp3 = services.media.mp3(seconds);
  return {
    kind: 'binary',
    contentType: 'audio/mpeg',
    body: mp3,
    headers: { 'x-character-count': String(chars), 'character-cost': String(chars) },
  };
};

// SSML starts with <speak>, or with an XML declaration before it; "<speakers" is plain text.
const SSML_START = /^<(?:\?xml\b|speak\b)/;

/** POST /cloud-provider/speech: RIFF WAV (24 kHz 16-bit mono by default); SSML voice and prosody win. */
export const cloudSpeech: Handler = async ({ body, headers, services }) => {
  const { speech } = services.limits;
  const formatName = String(headers['x-microsoft-outputformat'] ?? speech.defaultOutputFormat)
    .trim()
    .toLowerCase();
  const format = speech.outputFormats[formatName];
  if (!format) {
    throw new ApiError(ERRORS.UNSUPPORTED_OUTPUT_FORMAT, {
      param: 'X-Microsoft-OutputFormat',
      message: `Unsupported X-Microsoft-OutputFormat '${formatName.slice(0, services.limits.messages.maxQuotedChars)}'. Supported: ${Object.keys(speech.outputFormats).join(', ')}.`,
    });
  }
  let text = body.text as string;
  let voice = body.voice as string;
  let rate = (body.rate as number | undefined) ?? 0;
  let pitch = (body.pitch as number | undefined) ?? 0;
  if (SSML_START.test(text.trimStart())) {
    // The XML parser loads on the first SSML request: most clients never send SSML, and start-up stays short.
    const { parseSsml } = await import('../text/ssml.js');
    const ssml = parseSsml(text, services.limits.messages.maxSsmlValueChars);
    voice = ssml.voice ?? voice;
    rate = ssml.ratePercent ?? rate;
    pitch = ssml.pitchPercent ?? pitch;
    text = ssml.text;
  }
  services.catalogue.require(voice, 'cloud-speech', 'voice');
  const seconds = speechSeconds(services, characterCount(text), rate);
  const seed = seedFrom(digest('cloud.speech', voice));
  const wav = services.media.wav(formatName, { ...format, durationSeconds: seconds, seed, pitchPercent: pitch });
  return { kind: 'binary', contentType: 'audio/wav', body: wav, headers: { 'x-microsoft-outputformat': formatName } };
};
