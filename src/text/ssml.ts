import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { ApiError, ERRORS } from '../contract/errors.js';

/** What the mock reads from SSML: the voice and prosody it names, and the text to speak. */
interface Ssml {
  voice?: string;
  style?: string;
  ratePercent?: number;
  pitchPercent?: number;
  text: string;
}

type Node = Record<string, unknown> & { ':@'?: Record<string, string> };

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  trimValues: false,
  processEntities: true,
});

// Named levels from the SSML prosody table, as percent changes.
const RATE_WORDS: Record<string, number> = { 'x-slow': -50, slow: -36, medium: 0, default: 0, fast: 55, 'x-fast': 100 };
const PITCH_WORDS: Record<string, number> = { 'x-low': -45, low: -20, medium: 0, default: 0, high: 20, 'x-high': 45 };

/** Parses a prosody value ("+30%", "-20.5%", "1.5" as a multiplier, "+2st", or a named level) as percent. */
export function prosodyPercent(value: string, words: Record<string, number>): number | undefined {
  const v = value.trim().toLowerCase();
  if (v in words) return words[v];
  const pct = /^([+-]?\d+(?:\.\d+)?)%$/.exec(v);
  if (pct) return Number(pct[1]);
  const st = /^([+-]?\d+(?:\.\d+)?)st$/.exec(v);
  if (st) return (2 ** (Number(st[1]) / 12) - 1) * 100;
  const mult = /^(\d+(?:\.\d+)?)$/.exec(v);
  if (mult) return (Number(mult[1]) - 1) * 100;
  return undefined;
}

const invalid = (message: string) =>
  new ApiError(ERRORS.INVALID_SSML, { param: 'text', message: `Invalid SSML in 'text': ${message}` });

const tagOf = (node: Node) => Object.keys(node).find((k) => k !== ':@')!;

/** Parses SSML text; malformed XML, a root other than <speak>, or prosody outside <voice> is a 400 (quoting at most
 * `maxQuotedChars` of a value: messages.maxSsmlValueChars). */
export function parseSsml(xml: string, maxQuotedChars: number): Ssml {
  const check = XMLValidator.validate(xml);
  if (check !== true) throw invalid(`${check.err.msg} (line ${check.err.line}, column ${check.err.col}).`);
  const roots = (parser.parse(xml) as Node[]).filter(
    (n) => !tagOf(n).startsWith('?') && tagOf(n) !== '#text' && tagOf(n) !== '#comment',
  );
  if (roots.length !== 1 || tagOf(roots[0]!) !== 'speak') throw invalid('the root element must be <speak>.');
  const out: Ssml = { text: '' };
  const walk = (nodes: Node[], inVoice: boolean) => {
    for (const node of nodes) {
      const tag = tagOf(node);
      const attrs = node[':@'] ?? {};
      if (tag === '#text') {
        out.text += String(node[tag]);
        continue;
      }
      const local = tag.replace(/^.*:/, '');
      if ((local === 'prosody' || local === 'express-as') && !inVoice)
        throw invalid(`<${tag}> must be inside <voice>.`);
      if (local === 'voice') {
        if (!attrs.name) throw invalid('<voice> needs a name attribute.');
        out.voice ??= attrs.name;
      }
      if (local === 'express-as' && attrs.style) out.style ??= attrs.style;
      if (local === 'prosody') {
        if (attrs.rate !== undefined) {
          const r = prosodyPercent(attrs.rate, RATE_WORDS);
          if (r === undefined)
            throw invalid(
              `prosody rate '${attrs.rate.slice(0, maxQuotedChars)}' is not a percent, multiplier or level.`,
            );
          out.ratePercent ??= r;
        }
        if (attrs.pitch !== undefined) {
          const p = prosodyPercent(attrs.pitch.replace(/hz$/i, ''), PITCH_WORDS);
          out.pitchPercent ??= p ?? 0;
        }
      }
      if (Array.isArray(node[tag])) walk(node[tag] as Node[], inVoice || local === 'voice');
    }
  };
  walk(roots[0]!.speak as Node[], false);
  out.text = out.text.replace(/\s+/g, ' ').trim();
  return out;
}
