import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../src/contract/errors.js';
import { loadLimits } from '../../src/domain/limits.js';
import { parseSsml, prosodyPercent } from '../../src/text/ssml.js';

// How much of a value it cannot read an invalid_ssml message quotes (messages.maxSsmlValueChars).
const QUOTE = loadLimits().messages.maxSsmlValueChars;

const RATE = { slow: -36, medium: 0 };

function rejects(xml: string, pattern: RegExp): void {
  try {
    parseSsml(xml, QUOTE);
  } catch (err) {
    assert.instance(err, ApiError);
    const e = err as ApiError;
    assert.is(e.status, 400);
    assert.is(e.code, 'invalid_ssml');
    assert.is(e.param, 'text');
    assert.match(e.message, pattern);
    return;
  }
  assert.unreachable(`accepted: ${xml}`);
}

test('prosodyPercent reads percents, semitones, multipliers and named levels', () => {
  assert.is(prosodyPercent('+30%', RATE), 30);
  assert.is(prosodyPercent('-20.5%', RATE), -20.5);
  assert.is(prosodyPercent('1.5', RATE), 50);
  assert.is(prosodyPercent(' SLOW ', RATE), -36);
  assert.ok(Math.abs(prosodyPercent('+12st', RATE)! - 100) < 1e-9);
  assert.is(prosodyPercent('fast-ish', RATE), undefined);
  assert.is(prosodyPercent('', RATE), undefined);
});

test('a full SSML document: voice, express-as style, prosody and the spoken text', () => {
  const ssml = parseSsml(
    `<?xml version="1.0"?>
    <speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" xmlns:mstts="https://www.w3.org/2001/mstts" xml:lang="en-US">
      <voice name="en-GB-RyanNeural">
        <mstts:express-as style="cheerful">
          <prosody rate="+25%" pitch="-10%">Good   morning, &amp; welcome!</prosody>
        </mstts:express-as>
      </voice>
    </speak>`,
    QUOTE,
  );
  assert.equal(ssml, {
    voice: 'en-GB-RyanNeural',
    style: 'cheerful',
    ratePercent: 25,
    pitchPercent: -10,
    text: 'Good morning, & welcome!',
  });
});

test('the first voice and the first prosody win; text from every voice is spoken', () => {
  const ssml = parseSsml(
    '<speak><voice name="a-B-One"><prosody rate="slow">one</prosody></voice><voice name="a-B-Two"><prosody rate="fast">two</prosody></voice></speak>',
    QUOTE,
  );
  assert.is(ssml.voice, 'a-B-One');
  assert.is(ssml.ratePercent, -36);
  assert.is(ssml.text, 'onetwo');
});

test('plain text in <speak> with no voice or prosody leaves them unset', () => {
  const ssml = parseSsml('<speak>Hello <break time="200ms"/> there</speak>', QUOTE);
  assert.equal(ssml, { text: 'Hello there' });
});

test('a pitch in hertz or an unknown pitch word does not fail', () => {
  assert.is(
    parseSsml('<speak><voice name="x-Y-Z"><prosody pitch="+50Hz">a</prosody></voice></speak>', QUOTE).pitchPercent,
    0,
  );
  assert.is(
    parseSsml('<speak><voice name="x-Y-Z"><prosody pitch="high">a</prosody></voice></speak>', QUOTE).pitchPercent,
    20,
  );
});

test('malformed SSML is a 400 naming text and the position', () => {
  rejects('<speak><voice name="x-Y-Z">unclosed</speak>', /line 1/);
  rejects('<speak>a</speak><speak>b</speak>', /root/i);
  rejects('<voice name="x-Y-Z">a</voice>', /root element must be <speak>/);
  rejects('<speak><prosody rate="+10%">a</prosody></speak>', /<prosody> must be inside <voice>/);
  rejects('<speak><voice>a</voice></speak>', /<voice> needs a name/);
  rejects('<speak><voice name="x-Y-Z"><prosody rate="quick">a</prosody></voice></speak>', /prosody rate 'quick'/);
});

test.run();
