// The examples of README.md and docs/*.md, run against a mock started in this process.
//
// Every fenced block in sh/bash/shell, ts/js or json carries a marker on the last non-blank line
// before its fence (an HTML comment, so it does not show on GitHub); a block without one fails:
//
//   <!-- run: status=200,429 -->   shell: run with bash against a fresh mock; the HTTP status of each curl
//                                  call, in the order they happen (a loop makes several calls)
//   <!-- run: exit=0 -->           shell: the block's exit code; `unified-ai-mock` and `npx unified-ai-mock`
//                                  run this checkout's CLI (src/cli/main.ts)
//   <!-- run: status=413 config={"bodyLimit":1024} -->   the mock's options for the block (JSON, to the end)
//   <!-- run: node=22 -->          the block needs Node.js 22 or later (a client that requires it): skipped on older
// lines
//   <!-- run -->                   ts/js: written to a temporary .mts file and run with node --import tsx;
//                                  it must exit 0, and a line `console.log(x); // <JSON>` must log that
//                                  value (deep equality) and must run
//   <!-- schema: config.json -->   json: valid against that schema of schemas/; a config also builds the app
//   <!-- excerpt: examples/x -->   every non-blank line of the block is a line of that file, in order
//   <!-- norun: why -->            not run, on purpose (docker, npm install, a long-running server, ...)
//
// In every block, 127.0.0.1:4010 and localhost:4010 become the test mock's address, and
// `import ... from 'unified-ai-mock'` becomes this checkout's src/index.ts.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApp } from '../../src/app/createApp.js';
import { schemaId, SchemaRegistry } from '../../src/contract/schemas.js';
import { toDetails } from '../../src/contract/validation.js';
import type { ConfigInput } from '../../src/domain/config.js';
import { ROOT } from '../../src/lib/paths.js';
import { startMockServer, type MockServerOptions } from '../../src/server/programmatic.js';
import { builtIsCurrent, childEnv, cli } from '../support/index.js';

const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');
const FILES = [
  README,
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => join(DOCS, f)),
];
/** Written by another document's owner; the README links it before it exists. */
const MAY_BE_MISSING = new Set([join(DOCS, 'architecture.md')]);
const README_MAX_BYTES = 15_000;

const SHELL = new Set(['sh', 'bash', 'shell']);
const CODE = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs']);
const JSON_LANG = new Set(['json']);

interface Block {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  readonly marker: string | undefined;
}

/** The fenced blocks of a Markdown file, with the marker comment just before each (indented fences included). */
function blocksOf(file: string): Block[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.trimStart().startsWith(fence!)) end++;
    let before = i - 1;
    while (before >= 0 && lines[before]!.trim() === '') before--;
    const comment = before >= 0 ? /^<!--\s*(.*?)\s*-->$/.exec(lines[before]!.trim()) : null;
    const code = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l.trimStart()))
      .join('\n');
    blocks.push({ file, line: i + 1, lang: lang!.toLowerCase(), code, marker: comment?.[1] });
    i = end;
  }
  return blocks;
}

const where = (b: Block) => `${relative(ROOT, b.file)}:${b.line}`;
const blocks = FILES.flatMap(blocksOf);
const checked = blocks.filter((b) => SHELL.has(b.lang) || CODE.has(b.lang) || JSON_LANG.has(b.lang));

/** A marker, read: which kind, and its options. */
interface Marker {
  readonly kind: 'run' | 'norun' | 'schema' | 'excerpt';
  readonly statuses?: number[];
  readonly exit?: number;
  readonly config?: MockServerOptions;
  readonly arg?: string;
  /** The oldest Node.js major the block runs on. */
  readonly node?: number;
}

function parseMarker(b: Block): Marker | string {
  const m = /^(run|norun|schema|excerpt)\b:?\s*(.*)$/.exec(b.marker ?? '');
  if (!m)
    return `${where(b)}: a ${b.lang} block needs a marker just before it: <!-- run... -->, <!-- schema: ... -->, <!-- excerpt: ... --> or <!-- norun: why -->`;
  const kind = m[1] as Marker['kind'];
  let rest = m[2]!;
  if (kind === 'norun') return rest ? { kind } : `${where(b)}: <!-- norun --> needs a reason`;
  if (kind === 'schema' || kind === 'excerpt') {
    if (!JSON_LANG.has(b.lang) && kind === 'schema') return `${where(b)}: <!-- schema --> is for json blocks`;
    return rest ? { kind, arg: rest } : `${where(b)}: <!-- ${kind}: ... --> needs a file`;
  }
  if (JSON_LANG.has(b.lang)) return `${where(b)}: a json block is checked with <!-- schema: FILE -->, not run`;
  let config: MockServerOptions | undefined;
  const at = rest.indexOf('config=');
  if (at >= 0) {
    config = JSON.parse(rest.slice(at + 'config='.length)) as MockServerOptions;
    rest = rest.slice(0, at);
  }
  const status = /\bstatus=([\d,]+)/.exec(rest);
  const exit = /\bexit=(\d+)/.exec(rest);
  const node = /\bnode=(\d+)/.exec(rest);
  if (SHELL.has(b.lang) && !status && !exit)
    return `${where(b)}: a shell block to run states status=... (curl calls) or exit=N`;
  if (CODE.has(b.lang) && (status || exit)) return `${where(b)}: a ts/js block must exit 0: use <!-- run -->`;
  return {
    kind,
    statuses: status?.[1]!.split(',').map(Number),
    exit: exit ? Number(exit[1]) : undefined,
    config,
    node: node ? Number(node[1]) : undefined,
  };
}

const TSX = import.meta.resolve('tsx');
// The package's entry as users import it (dist/) when it is a build of src/ as it is: loaded in a fraction of src/'s
// time through tsx.
const ENTRY = pathToFileURL(join(ROOT, ...(builtIsCurrent() ? ['dist', 'index.js'] : ['src', 'index.ts']))).href;

/** The environment of the children: no coverage (only this process's src/ counts), no colours. */
const plainEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv =>
  childEnv({ NO_COLOR: '1', FORCE_COLOR: '0', ...extra });

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function spawn(file: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Finished> {
  return new Promise((done) => {
    execFile(file, args, { cwd, env, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      done({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

const toMock = (code: string, address: string) => code.replace(/(?:127\.0\.0\.1|localhost):4010\b/g, address);

// curl reports each call's status on stderr, so the block's own output and pipes stay as written.
const SHELL_PRELUDE = `
curl() { command curl --max-time 20 "$@" -w '%{stderr}\\n@@status %{http_code}\\n'; }
unified-ai-mock() { '${process.execPath}' ${cli()
  .args.map((a) => `'${a}'`)
  .join(' ')} "$@"; }
npx() { if [ "$1" = unified-ai-mock ]; then shift; unified-ai-mock "$@"; else echo "npx $1: not available to doc examples" >&2; return 127; fi; }
`;

async function runShell(b: Block, m: Marker, cwd: string): Promise<void> {
  if (m.statuses) assert.match(b.code, /\bcurl\b/, `${where(b)}: status= is given but the block calls no curl`);
  const mock = await startMockServer(m.config ?? {});
  try {
    const script = SHELL_PRELUDE + toMock(b.code, `127.0.0.1:${mock.port}`);
    const out = await spawn('bash', ['-c', script], cwd, plainEnv());
    const statuses = [...out.stderr.matchAll(/^@@status (\d{3})$/gm)].map((s) => Number(s[1]));
    const shown = `\n--- stdout\n${out.stdout.slice(0, 3000)}\n--- stderr\n${out.stderr.slice(0, 3000)}`;
    if (m.statuses) assert.equal(statuses, m.statuses, `${where(b)}: HTTP statuses of the curl calls${shown}`);
    if (m.exit !== undefined) assert.is(out.code, m.exit, `${where(b)}: exit code${shown}`);
  } finally {
    await mock.close();
  }
}

/** Rewrites bare imports to absolute URLs (the file runs outside the project) and `console.log(x); // JSON` into
 * checks. */
function doctest(b: Block, address: string): string {
  const lines = toMock(b.code, address).split('\n');
  const checks: number[] = [];
  const body = lines.map((line, i) => {
    const spec = /\b(from|import)\s+(['"])([^'"]+)\2/.exec(line);
    if (spec && !spec[3]!.startsWith('.') && !spec[3]!.startsWith('node:')) {
      const url = spec[3] === 'unified-ai-mock' ? ENTRY : import.meta.resolve(spec[3]!);
      line = line.replace(`${spec[2]}${spec[3]}${spec[2]}`, JSON.stringify(url));
    }
    const expect = /\/\/\s*(.+?)\s*$/.exec(line);
    if (expect && line.split('console.log(').length === 2) {
      let expected: unknown;
      try {
        expected = JSON.parse(expect[1]!);
      } catch {
        return line; // a comment in words, not a value
      }
      const at = b.line + 1 + i;
      checks.push(at);
      line = line.replace('console.log(', `__check(${at}, ${JSON.stringify(expected)}, `);
    }
    return line;
  });
  const prelude = [
    `import { inspect as __inspect, isDeepStrictEqual as __equal } from 'node:util';`,
    `const __seen = new Set<number>();`,
    `function __check(line: number, expected: unknown, actual: unknown): void {`,
    `  __seen.add(line);`,
    `  console.log(actual);`,
    `  if (!__equal(actual, expected)) throw new Error(\`line \${line}: logged \${__inspect(actual)}, the comment says \${JSON.stringify(expected)}\`);`,
    `}`,
  ];
  const epilogue = [
    `for (const line of ${JSON.stringify(checks)}) if (!__seen.has(line)) throw new Error(\`line \${line}: this console.log never ran\`);`,
  ];
  return [...prelude, ...body, ...epilogue].join('\n');
}

async function runCode(b: Block, m: Marker, cwd: string): Promise<void> {
  const mock = await startMockServer(m.config ?? {});
  try {
    const file = join(cwd, 'example.mts');
    writeFileSync(file, doctest(b, `127.0.0.1:${mock.port}`));
    const env = plainEnv({ OPENAI_BASE_URL: mock.openaiBaseURL, OPENAI_API_KEY: mock.apiKey });
    const out = await spawn(process.execPath, ['--import', TSX, file], cwd, env);
    assert.is(
      out.code,
      0,
      `${where(b)}: the example exited with ${out.code}\n--- stdout\n${out.stdout.slice(0, 3000)}\n--- stderr\n${out.stderr.slice(0, 3000)}`,
    );
  } finally {
    await mock.close();
  }
}

const registry = SchemaRegistry.shared();

function checkSchema(b: Block, m: Marker): void {
  const value = JSON.parse(b.code) as unknown;
  const errors = registry.check(schemaId(m.arg!), value);
  assert.equal(toDetails(errors), [], `${where(b)}: not valid against schemas/${m.arg}`);
  // A configuration must also start: fault rules are checked beyond their schema (operations, key labels).
  if (m.arg === 'config.json' && !(value as ConfigInput).replyRules)
    createApp(value as ConfigInput, { report: () => {} });
}

function checkExcerpt(b: Block, m: Marker): void {
  const path = join(ROOT, m.arg!);
  assert.ok(existsSync(path), `${where(b)}: ${m.arg} does not exist`);
  const source = readFileSync(path, 'utf8')
    .split('\n')
    .map((l) => l.trimEnd());
  let at = 0;
  for (const line of b.code.split('\n').map((l) => l.trimEnd())) {
    if (line === '') continue;
    while (at < source.length && source[at] !== line) at++;
    assert.ok(at < source.length, `${where(b)}: this line is not in ${m.arg} (in this order): ${line}`);
    at++;
  }
}

// Every marker is read up front, so a block without one fails before anything runs.
const markers = new Map<Block, Marker>();
const problems: string[] = [];
for (const b of checked) {
  const m = parseMarker(b);
  if (typeof m === 'string') problems.push(m);
  else markers.set(b, m);
}

test('every shell, ts/js and json block is marked to run, to check or to skip', () => {
  assert.equal(problems, [], problems.join('\n'));
  assert.ok(blocks.length > 0 && FILES.length > 1, 'no documentation found');
});

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
/** A block that needs a newer Node.js than this one is skipped (uvu counts it), not run. */
const tooNew = (m: Marker) => m.node !== undefined && m.node > NODE_MAJOR;

// The runs start together, two at a time (each spawns node or bash); each test awaits its own.
const runnable = [...markers].filter(
  ([b, m]) => m.kind === 'run' && !tooNew(m) && (SHELL.has(b.lang) || CODE.has(b.lang)),
);
const work = mkdtempSync(join(tmpdir(), 'uam-docs-'));
const results = new Map<Block, Promise<unknown>>();
test.before(() => {
  let next = 0;
  const settle = new Map<Block, { ok: (v: unknown) => void; fail: (e: unknown) => void }>();
  for (const [b] of runnable) {
    const p = new Promise((ok, fail) => settle.set(b, { ok, fail }));
    p.catch(() => {}); // reported by the block's test
    results.set(b, p);
  }
  const worker = async () => {
    while (next < runnable.length) {
      const [b, m] = runnable[next++]!;
      const cwd = mkdtempSync(join(work, 'block-'));
      const { ok, fail } = settle.get(b)!;
      await (SHELL.has(b.lang) ? runShell(b, m, cwd) : runCode(b, m, cwd)).then(ok, fail);
    }
  };
  void Promise.all([worker(), worker()]);
});
test.after(() => rmSync(work, { recursive: true, force: true }));

for (const [b, m] of markers) {
  if (m.kind === 'run')
    (tooNew(m) ? test.skip : test)(
      `${where(b)} runs (${b.lang})${m.node ? ` on Node.js ${m.node}+` : ''}`,
      async () => void (await results.get(b)),
    );
  if (m.kind === 'schema') test(`${where(b)} is valid against schemas/${m.arg}`, () => checkSchema(b, m));
  if (m.kind === 'excerpt') test(`${where(b)} is an excerpt of ${m.arg}`, () => checkExcerpt(b, m));
}

/** Fenced blocks, indented ones included: their `#` lines are not headings and their brackets are not links. */
const FENCED = /^[ \t]*(`{3,}|~{3,})[\s\S]*?^[ \t]*\1/gm;

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(FENCED, '');
  const slugs = [...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((h) =>
    h[1]!
      .trim()
      .toLowerCase()
      .replace(/`/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-'),
  );
  return new Set(slugs);
}

test('relative links point at files and headings that exist', () => {
  const broken: string[] = [];
  for (const file of FILES) {
    const text = readFileSync(file, 'utf8').replace(FENCED, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue;
      const [path, anchor] = target!.split('#') as [string, string | undefined];
      const dest = path ? resolve(dirname(file), path) : file;
      if (!existsSync(dest)) {
        if (!MAY_BE_MISSING.has(dest)) broken.push(`${relative(ROOT, file)}: ${target} (no such file)`);
        continue;
      }
      if (anchor && dest.endsWith('.md') && !anchorsOf(dest).has(anchor))
        broken.push(`${relative(ROOT, file)}: ${target} (no such heading)`);
    }
  }
  assert.equal(broken, [], broken.join('\n'));
});

// A reader follows the documents in order on one server: an id the server made (`rule-1`) names whatever rule came
// first on that server, maybe another document's, so an example deletes only the rules it named itself.
test('no example deletes a fault rule by an id the server made: each names its own rule', () => {
  const generated = checked.filter((b) => /__admin\/faults\/rule-\d/.test(b.code)).map(where);
  assert.equal(generated, [], 'examples that delete a fault rule by a server-made id');
});

test("the fault rules' examples, followed in order on one server, do what each says", async () => {
  // Every shell example that adds or deletes fault rules on a default mock, README first, as a reader goes.
  const ordered = checked.filter((b) => SHELL.has(b.lang) && /__admin\/faults/.test(b.code));
  const runs = ordered.flatMap((b) => {
    const m = parseMarker(b);
    return typeof m === 'object' && m.kind === 'run' && !m.config && m.statuses ? [{ b, m }] : [];
  });
  assert.ok(runs.length >= 3, `${runs.length} examples`);
  const mock = await startMockServer();
  const cwd = mkdtempSync(join(tmpdir(), 'uam-doc-order-'));
  try {
    for (const { b, m } of runs) {
      const out = await spawn(
        'bash',
        ['-c', SHELL_PRELUDE + toMock(b.code, `127.0.0.1:${mock.port}`)],
        cwd,
        plainEnv(),
      );
      const statuses = [...out.stderr.matchAll(/^@@status (\d{3})$/gm)].map((s) => Number(s[1]));
      assert.equal(statuses, m.statuses, `${where(b)}, after the examples before it${out.stdout.slice(0, 2000)}`);
      // What an example added and deleted by name is gone; a rule it left is the one it meant to leave.
      const deleted = [...b.code.matchAll(/-X DELETE \S*\/__admin\/faults\/([\w.:-]+)/g)].map((d) => d[1]);
      const left = mock.faultRules().map((r) => r.id);
      for (const id of deleted) assert.not.ok(left.includes(id), `${where(b)} deleted ${id}, which is still listed`);
    }
  } finally {
    await mock.close();
    rmSync(cwd, { recursive: true, force: true });
  }
});

test('the README stays one page and links every document of docs/', () => {
  const text = readFileSync(README, 'utf8');
  const size = Buffer.byteLength(text);
  assert.ok(
    size < README_MAX_BYTES,
    `README.md is ${size} bytes: move detail into docs/ (the limit is ${README_MAX_BYTES})`,
  );
  for (const needed of ['npm view unified-ai-mock', 'npm pack', 'npx unified-ai-mock serve', 'npm test'])
    assert.ok(text.includes(needed), `README.md lost \`${needed}\``);
  const docs = [...new Set([...FILES.filter((f) => f !== README), ...MAY_BE_MISSING])].map((f) => relative(ROOT, f));
  const unlinked = docs.filter((d) => !text.includes(`](${d})`));
  assert.equal(unlinked, [], `README.md does not link: ${unlinked.join(', ')}`);
});

test.run();
