// The comparison with Prism, WireMock and aimock (docs/mock.md, "How it compares", and its summary in
// README.md) holds our column to what the package really offers. Each row of the table is tied, here as
// data, to the things that stand behind it: a flag of `serve` (its help, written from the x-flags of
// schemas/config.json), a command of the CLI, a route of the operations table, a control header of the
// OpenAPI document, a directive of X-Mock-Fault, a field of a fault rule, an export, a document or a file.
// A row whose evidence exists may not say "no", and no paragraph of either section may say we do not do
// it; a row that says "yes" must have evidence, and every piece of evidence named must exist.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { serveHelp } from '../../src/cli/main.js';
import { operations } from '../../src/contract/operations.js';
import { parseFaultHeader } from '../../src/domain/faults/header.js';
import * as pkg from '../../src/index.js';
import { ROOT } from '../../src/lib/paths.js';
import { DEFAULT_SERVER_URL, openApiDocument } from '../../src/tools/openapi/index.js';
import { packageLimits } from '../../src/domain/limits.js';
import { cli } from '../support/child.js';

/** One thing the package offers, which a row of the table can point at. */
type Evidence =
  | { readonly flag: string } // as `serve --help` shows it: `--record DIR`
  | { readonly command: string } // a command of `unified-ai-mock --help`
  | { readonly route: string } // `METHOD /path` of the operations table
  | { readonly header: string } // a header parameter of the OpenAPI document
  | { readonly fault: string } // an X-Mock-Fault value the parser accepts
  | { readonly ruleField: string } // a property of schemas/fault-rule.json
  | { readonly export: string } // a function exported by the package
  | { readonly file: string }; // a file of the repository (documents: docs/NAME.md)

/** A row of the table: what backs our cell, or why nothing here can; `denied` finds a sentence saying we lack it. */
interface Row {
  readonly evidence: readonly Evidence[];
  readonly unchecked?: string;
  readonly denied?: RegExp;
}

/** Every row of the table, by its first cell. */
const ROWS: Readonly<Record<string, Row>> = {
  'APIs it can mock': { evidence: [], unchecked: 'a scope, not a feature: "this one API only"' },
  'Request validation against a schema': {
    evidence: [{ flag: '--strict' }, { file: 'schemas/chat-request.json' }],
    denied: /validat/i,
  },
  'Bearer key checking': { evidence: [{ flag: '--api-key KEY' }, { route: 'GET /v1/me' }], denied: /\bkeys?\b/i },
  'Streamed (SSE) answers': {
    evidence: [
      { header: 'X-Mock-Pacing' },
      { file: 'schemas/chat-completion-chunk.json' },
      { flag: '--ttft MS' },
      { flag: '--tps N' },
    ],
    denied: /stream|SSE/,
  },
  'Real media bytes (PNG, MP3, WAV, MP4)': {
    evidence: [{ route: 'GET /media/images/:size/:file' }, { route: 'GET /media/videos/:resolution/:duration/:file' }],
    denied: /media|PNG|MP3|WAV|MP4/,
  },
  'Per-request control by header': {
    evidence: [
      { header: 'Prefer' },
      { header: 'X-Mock-Fault' },
      { header: 'X-Mock-Pacing' },
      { header: 'X-Mock-Reply-Rule' },
      { flag: '--no-fault-headers' },
    ],
    denied: /header/i,
  },
  'Connection faults (reset, empty close)': {
    evidence: [{ fault: 'reset' }, { fault: 'empty' }],
    denied: /reset|connection fault/i,
  },
  'Cut, stalled or malformed streams': {
    evidence: [{ fault: 'stream-cut=3' }, { fault: 'stall=3' }, { fault: 'malformed' }],
    denied: /cut|stall|malformed/i,
  },
  'Faults from rules: first N requests, or at random from a seed': {
    evidence: [
      { route: 'POST /__admin/faults' },
      { ruleField: 'times' },
      { ruleField: 'probability' },
      { ruleField: 'seed' },
    ],
    denied: /fault rule|random/i,
  },
  'Latency with jitter or a distribution': {
    evidence: [
      { fault: 'delay=100' },
      { flag: '--ttft MS' },
      { flag: '--tps N' },
      { flag: '--latency PROFILE' },
      { flag: '--latency-seed N' },
      { file: 'docs/load-testing.md' },
    ],
    denied: /latenc|distribution|jitter/i,
  },
  'Request journal and admin API': {
    evidence: [
      { route: 'GET /__admin/requests' },
      { route: 'POST /__admin/reset' },
      { route: 'GET /__admin/' },
      { file: 'docs/inspector.md' },
    ],
    denied: /journal|admin API/i,
  },
  'Record and replay, proxy to the real service': {
    evidence: [
      { flag: '--proxy URL' },
      { flag: '--record DIR' },
      { flag: '--replay DIR' },
      { file: 'docs/record-replay.md' },
    ],
    denied: /record|replay|proxy/i,
  },
  'Stateful scenarios': {
    evidence: [{ route: 'GET /video-provider/generate/:id' }, { ruleField: 'times' }, { flag: '--state STORE' }],
  },
  'Checks another implementation (conformance)': {
    evidence: [{ command: 'conformance' }, { file: 'docs/conformance.md' }, { flag: '--violations-report FILE' }],
    denied: /conformance|other implementations/i,
  },
  'OpenAPI document': { evidence: [{ route: 'GET /openapi.json' }, { command: 'openapi' }], denied: /OpenAPI/ },
  'Programmatic use in JS/TS tests': {
    evidence: [{ export: 'startMockServer' }, { file: 'docs/programmatic.md' }],
    denied: /startMockServer|in-process/i,
  },
  Container: { evidence: [{ file: 'Dockerfile' }], denied: /container|docker/i },
  'Published performance figures': {
    evidence: [{ file: 'docs/performance.md' }, { file: 'bench/run.ts' }],
    denied: /performance|figures/i,
  },
};

const MOCK_MD = join(ROOT, 'docs', 'mock.md');
const README = join(ROOT, 'README.md');

/** The text of a document's `## How it compares` section, up to the next heading of its level. */
function section(file: string): string {
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf('\n## How it compares\n');
  assert.ok(start >= 0, `${file} has no section "How it compares"`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** The comparison table's rows: first cell, our cell. */
function tableRows(text: string): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('|') || /^\|[\s|:-]+\|$/.test(line)) continue;
    const cells = line
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim());
    if (cells[0] === '') continue; // the head: | | unified-ai-mock | Prism | ...
    rows.set(cells[0]!, cells[1]!);
  }
  return rows;
}

/** Sentences of a section's prose (not its table) that say what we do not do. */
function denials(text: string): string[] {
  const prose = text
    .split('\n')
    .filter((line) => !line.startsWith('|'))
    .join(' ');
  return prose.split(/(?<=\.)\s+/).filter((s) => /\b(does not|do not|doesn't|cannot)\b/i.test(s));
}

let topHelp: string | undefined;
/** `unified-ai-mock --help`, as the CLI prints it. */
function cliHelp(): string {
  const { args, env } = cli();
  topHelp ??= execFileSync(process.execPath, [...args, '--help'], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
  });
  return topHelp;
}

const headers = new Set<string>();
function openApiHeaders(): Set<string> {
  if (!headers.size) {
    const params = (
      openApiDocument(DEFAULT_SERVER_URL, packageLimits()) as {
        components: { parameters: Record<string, { in?: string; name?: string }> };
      }
    ).components.parameters;
    for (const p of Object.values(params)) if (p.in === 'header' && p.name) headers.add(p.name);
  }
  return headers;
}

/** Why a piece of evidence is missing, or undefined when it is there. */
function missing(e: Evidence): string | undefined {
  if ('flag' in e) return serveHelp().includes(`  ${e.flag} `) ? undefined : `no flag ${e.flag} in serve --help`;
  if ('command' in e) {
    const commands = cliHelp().split('Commands:')[1] ?? '';
    return new RegExp(`^  ${e.command} `, 'm').test(commands)
      ? undefined
      : `no command ${e.command} in unified-ai-mock --help`;
  }
  if ('route' in e) {
    const [method, path] = e.route.split(' ');
    return operations.some((op) => op.method === method && op.path === path)
      ? undefined
      : `no route ${e.route} in the operations table`;
  }
  if ('header' in e)
    return openApiHeaders().has(e.header) ? undefined : `no header ${e.header} in the OpenAPI document`;
  if ('fault' in e) {
    try {
      parseFaultHeader(e.fault, { maxDelayMs: 60_000 });
      return undefined;
    } catch (err) {
      return `X-Mock-Fault: ${e.fault} is refused: ${(err as Error).message}`;
    }
  }
  if ('ruleField' in e) {
    const schema = JSON.parse(readFileSync(join(ROOT, 'schemas', 'fault-rule.json'), 'utf8')) as {
      properties: Record<string, unknown>;
    };
    return e.ruleField in schema.properties ? undefined : `no field ${e.ruleField} in schemas/fault-rule.json`;
  }
  if ('export' in e)
    return typeof (pkg as Record<string, unknown>)[e.export] === 'function'
      ? undefined
      : `the package exports no function ${e.export}`;
  return existsSync(join(ROOT, e.file)) ? undefined : `no file ${e.file}`;
}

/** Our cell as a verdict: "no", "yes", or a description (which offers something). */
const verdict = (cell: string): 'no' | 'yes' | 'text' =>
  /^no\b/i.test(cell) ? 'no' : /^yes\b/i.test(cell) ? 'yes' : 'text';

test('every row of the comparison table is tied to evidence here, and every entry here to a row', () => {
  const rows = tableRows(section(MOCK_MD));
  assert.ok(rows.size >= 10, `read ${rows.size} rows from the table of docs/mock.md`);
  assert.equal(
    [...rows.keys()].filter((name) => !(name in ROWS)),
    [],
    'rows of docs/mock.md with no entry in ROWS: tie them to evidence',
  );
  assert.equal(
    Object.keys(ROWS).filter((name) => !rows.has(name)),
    [],
    'entries of ROWS with no row in docs/mock.md (renamed?)',
  );
  for (const [name, row] of Object.entries(ROWS))
    assert.ok(row.evidence.length > 0 || row.unchecked, `${name}: no evidence and no reason why none`);
});

test('the evidence of every row exists in the package', () => {
  const problems = Object.entries(ROWS).flatMap(([name, row]) =>
    row.evidence.flatMap((e) => missing(e) ?? []).map((why) => `${name}: ${why}`),
  );
  assert.equal(problems, [], problems.join('\n'));
});

test('our column says "no" to nothing the package offers, and "yes" only with evidence', () => {
  const problems: string[] = [];
  for (const [name, cell] of tableRows(section(MOCK_MD))) {
    const row = ROWS[name];
    if (!row) continue; // the first test names it
    const offered = row.evidence.length > 0 && row.evidence.every((e) => missing(e) === undefined);
    if (verdict(cell) === 'no' && offered) problems.push(`${name}: "${cell}", but the package offers it`);
    if (verdict(cell) === 'yes' && !row.evidence.length) problems.push(`${name}: "yes" with nothing here behind it`);
  }
  assert.equal(problems, [], problems.join('\n'));
});

test('no sentence of README.md or docs/mock.md under "How it compares" denies a feature the package offers', () => {
  const problems: string[] = [];
  for (const file of [README, MOCK_MD]) {
    for (const sentence of denials(section(file))) {
      for (const [name, row] of Object.entries(ROWS)) {
        if (row.denied?.test(sentence) && row.evidence.every((e) => missing(e) === undefined))
          problems.push(`${file}: "${sentence}" denies "${name}"`);
      }
    }
  }
  assert.equal(problems, [], problems.join('\n'));
});

/** Every document a newcomer reads. */
const DOCUMENTS = [
  README,
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(ROOT, 'docs', f)),
];

/** Sentences of a document's prose (no code, no tables) in which the mock, or we, do not, cannot, never or only do
 * something: the claims a reader takes as what the package lacks. */
function claims(file: string): string[] {
  const prose = readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('|'))
    .join(' ');
  return prose
    .split(/(?<=[.:;])\s+/)
    .filter((s) =>
      /\b(the mock|unified-ai-mock|we|it)\b[^.]*\b(does not|do not|doesn't|cannot|can't|has no|offers no|only)\b/i.test(
        s,
      ),
    );
}

/** Sentences the check below would take for a denial, each with why it is none: the words it matched name something
 * else. */
const NOT_DENIALS: Readonly<Record<string, string>> = {
  "the upstream's catalogue may hold models the mock's does not":
    'models of a catalogue (fixtures/models.json), not streams: "stream" is in "upstream"',
  'for what it does not offer': "a gateway's operations (conformance --unsupported), not the mock's headers",
  'a rate it cannot read is quoted': 'an SSML rate the mock cannot parse: a 400, tested in test/handlers',
  "the gateway's timeout for a provider that does not answer":
    "a hung provider behind a gateway (the gateway profile's timeout case), not the mock's keys or streams",
  'A header the mock cannot read, a part out of its bounds':
    'an X-Mock-Pacing value the mock cannot parse: a 400 invalid_header, tested in test/hardening/pacing.test.ts',
};

test('no sentence of README.md or docs/ says the mock lacks a feature the package offers', () => {
  const problems: string[] = [];
  for (const file of DOCUMENTS)
    for (const sentence of claims(file))
      for (const [name, row] of Object.entries(ROWS))
        if (
          !Object.keys(NOT_DENIALS).some((known) => sentence.includes(known)) &&
          row.denied?.test(sentence) &&
          /\b(does not|do not|doesn't|cannot|can't|has no|offers no)\b[^.]*$/i.test(sentence) &&
          row.evidence.every((e) => missing(e) === undefined)
        )
          problems.push(`${file.slice(ROOT.length + 1)}: "${sentence}" denies "${name}"`);
  assert.equal(problems, [], problems.join('\n'));
  const text = DOCUMENTS.map((f) => claims(f).join(' ')).join(' ');
  const stale = Object.keys(NOT_DENIALS).filter((known) => !text.includes(known));
  assert.equal(stale, [], 'NOT_DENIALS entries no document says any more');
});

test.run();
