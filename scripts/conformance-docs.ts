// Writes the figures of docs/conformance.md from the suite itself: the case families with their counts per
// profile and level, every `should` case with the sentence it cites, and what a run costs. Each table sits between
// `<!-- generated: NAME -->` and `<!-- end generated -->`;
// `npm run docs:conformance` rewrites them, and test/docs/conformance.test.ts fails when the file differs.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Catalogue } from '../src/domain/catalogue.js';
import { SchemaRegistry } from '../src/contract/schemas.js';
import { ROOT } from '../src/lib/paths.js';
import { addCost, formatCost, zeroCost } from '../src/verdict/cost.js';
import { parseConformanceArgs } from '../src/tools/conformance/options.js';
import { selectCases } from '../src/tools/conformance/select.js';
import { loadSuite } from '../src/tools/conformance/suite.js';
import type { Case, Level, Profile } from '../src/verdict/types.js';

export const CONFORMANCE_DOC = join(ROOT, 'docs', 'conformance.md');

// What each family checks and the part of the API document its cases cite, in words; the counts come from the suite.
const FAMILIES: readonly [string, string, string][] = [
  [
    'auth',
    'the four 401 cases (no header, `Basic` scheme, empty token, a key no target issues) on each of the seven operations; near misses of the key (`auth.near-miss.*`: another scheme, the key altered a little, the key carried outside the Authorization header; see below) on `GET /v1/me` and chat; in `full`, no header with malformed JSON or an empty object as the body (401, not 400: the key comes first) on each operation that takes a body',
    'Authentication 1, 2 and 3; Errors (401)',
  ],
  [
    'fault',
    'an injected 500 and 429 (tag `rate-limit`) on each operation, when the target honours the fault headers',
    "Errors (429, 500): the mock's fault headers",
  ],
  [
    'chat',
    "valid minimal, maximal and streamed requests, a stream that asks for its usage, replies held to a stop sequence, and a charset in the Content-Type; `messages` and each message's `role` and `content`, `temperature`, `top_p`, `max_tokens`, `stop` and its items, `stream`, `stream_options`, `seed`, `user`; body syntax; models and per-model limits",
    'Chat request; Limits (temperature, top_p); What the service does (JSON object bodies)',
  ],
  [
    'chat@stream',
    'every invalid chat request again with `stream: true` (the streamed path)',
    'Endpoints, note 1, and the Chat request rules',
  ],
  [
    'images',
    '`prompt` length (1000 just inside and just outside), `size`, `quality`, `style`, `n` (the n ≤ 1 rule), `response_format`, `user`; body syntax; models, per-model `n` and the `response_format` a model refuses',
    'Image generation request; Limits (prompt length, n)',
  ],
  [
    'edit',
    '`prompt`, the `image` payload (base64, a data URI, base64 or a data URI of text, a non-image media type, no base64 marker), `seed`; body syntax',
    'Image edit request (base64 image, data-URI form)',
  ],
  [
    'video',
    '`mode`, `image_url` for `image_to_video`, `duration` 4/8/16, `resolution`, `prompt`, `seed`, models; body syntax',
    'Video generation request; Endpoints, note 4; Limits (duration)',
  ],
  [
    'video@image',
    'every invalid video request again in `image_to_video` mode',
    'Video generation request (image_to_video) and its rules',
  ],
  [
    'tts',
    '`text` length (2500), `voice_id`, `model_id`, `voice_settings` and its ranges; body syntax',
    'Voice-provider speech request; Limits (text length)',
  ],
  [
    'speech',
    '`voice`, `style`, `rate` and `pitch` (−50 to 50), `text`, SSML; body syntax',
    'Cloud-provider speech request; Limits (rate, pitch)',
  ],
  [
    'speech@ssml',
    'every invalid cloud speech request again with SSML text',
    'Endpoints, 6 (SSML), and the cloud speech rules',
  ],
  ['me', '`GET /v1/me` with a valid key, and with the scheme written `bearer`', 'Authentication (the identity call)'],
];

const familyOf = (c: Case): string => c.id.split('.')[0]!;

function suite(): { cases: readonly Case[]; of: (p: Profile) => Case[] } {
  const registry = SchemaRegistry.shared();
  const options = parseConformanceArgs(
    ['--base-url', 'http://127.0.0.1:4010', '--api-key', 'k'],
    new Catalogue(registry),
    {},
  );
  if (options === 'help' || options === 'version') throw new Error(`unexpected ${options}`);
  const { cases } = loadSuite(registry, options.values);
  return { cases, of: (profile) => selectCases(cases, { profile, only: [], skip: [], skipBillable: false }).cases };
}

/** The case families: id prefix, cases in documented (must + should) / full, what they check. */
export function familiesTable(): string {
  const { cases, of } = suite();
  const count = (p: Profile, f: string, level?: Level) =>
    of(p).filter((c) => familyOf(c) === f && (level === undefined || c.level === level)).length;
  const known = new Set(FAMILIES.map(([f]) => f));
  const missing = [...new Set(cases.map(familyOf))].filter((f) => !known.has(f));
  if (missing.length)
    throw new Error(`scripts/conformance-docs.ts: no words for the case families ${missing.join(', ')}`);
  const rows = FAMILIES.map(
    ([f, what, cites]) =>
      `| \`${f}.*\` | ${count('documented', f, 'must')} + ${count('documented', f, 'should')} / ${count('full', f)} | ${what} | ${cites} |`,
  );
  const generated = (p: Profile) => of(p).filter((c) => c.tags.includes('generated')).length;
  return [
    `A full run has ${of('full').length} cases (${of('documented').length} in \`documented\`), ${generated('documented')} / ${generated('full')} of them generated from the schemas and the catalogue.`,
    '',
    '| Family | Cases (documented must + should / full) | What they check | The rule they cite |',
    '|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** Every `should` case of the documented profile: its id and the sentence of the API document it cites. */
export function shouldTable(): string {
  const { of } = suite();
  const rows = of('documented')
    .filter((c) => c.level === 'should')
    .map((c) => `| \`${c.id}\` | ${c.expect.status} | ${c.rule.replace(/\|/g, '\\|')} |`);
  return ['| Case | Status | The sentence it cites |', '|---|---|---|', ...rows].join('\n');
}

/** What one run costs per profile, with the default parameters. */
export function costTable(): string {
  const { of } = suite();
  const row = (p: Profile, extra: string) => {
    const cases = of(p);
    const billable = cases.filter((c) => c.billable);
    const cost = billable.reduce((sum, c) => addCost(sum, c.cost), zeroCost());
    return `| \`${p}\` | ${cases.length} ${extra} | ${billable.length} | ${formatCost(cost)} |`;
  };
  return [
    '| Profile | Requests | Billable | Paid units |',
    '|---|---|---|---|',
    row('documented', '(+2 free probes of GET /v1/me)'),
    row('full', '(+2 probes, + media downloads)'),
  ].join('\n');
}

const TABLES: Readonly<Record<string, () => string>> = {
  'case families': familiesTable,
  'should cases': shouldTable,
  cost: costTable,
};

/** The document with every generated table rendered anew. */
export function renderConformanceDoc(doc: string): string {
  let out = doc;
  for (const [name, render] of Object.entries(TABLES)) {
    const marked = new RegExp(`(<!-- generated: ${name} -->\\n)[\\s\\S]*?(<!-- end generated -->)`);
    if (!marked.test(out)) throw new Error(`docs/conformance.md: no markers for the table '${name}'`);
    out = out.replace(marked, (_m, open: string, close: string) => `${open}${render()}\n${close}`);
  }
  return out;
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  writeFileSync(CONFORMANCE_DOC, renderConformanceDoc(readFileSync(CONFORMANCE_DOC, 'utf8')));
  process.stdout.write('docs/conformance.md: case families, should cases and cost tables written\n');
}
