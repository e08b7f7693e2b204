// The layout of src/ against the layer table of eslint.config.js (ESLint enforces the table itself):
// the table covers every folder, docs/architecture.md names every layer, there is no import circle
// even through type imports (which import-x/no-cycle skips), and the two tools load only what they need.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { LAYERS, PUBLIC_SURFACE } from '../eslint.config.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');
const LAYER_NAMES = Object.keys(LAYERS);

/** A path relative to src/, with forward slashes. */
const inSrc = (file: string): string => relative(SRC, file).split(sep).join('/');

/** The layer a file of src/ belongs to: the longest layer folder that holds it. */
function layerOf(file: string): string | undefined {
  const path = inSrc(file);
  return LAYER_NAMES.filter((layer) => path.startsWith(`${layer}/`)).sort((a, b) => b.length - a.length)[0];
}

/** Every .ts file under a folder. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** One static import or re-export of a file of src/ by another: `types` when it brings in types only (erased at run
 * time). */
interface Edge {
  to: string;
  types: boolean;
}

/**
 * The static imports and re-exports of a file that lead to another file of src/ (dynamic `import()` is not followed).
 */
function importsOf(file: string): Edge[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const edges: Edge[] = [];
  const add = (specifier: ts.Expression | undefined, types: boolean) => {
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) return;
    const target = resolve(dirname(file), specifier.text.replace(/\.js$/, '.ts'));
    if (existsSync(target)) edges.push({ to: target, types });
    else assert.unreachable(`${inSrc(file)} imports ${specifier.text}, which is not a file of src/`);
  };
  for (const node of source.statements) {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named =
        clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const onlyTypes =
        !!clause &&
        (clause.isTypeOnly || (!clause.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier, onlyTypes);
    } else if (ts.isExportDeclaration(node)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(node.moduleSpecifier, node.isTypeOnly || (!!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    }
  }
  return edges;
}

const FILES = tsFiles(SRC);
const GRAPH = new Map(FILES.map((file) => [file, importsOf(file)]));

/** The files of src/ a module loads at run time: its static imports that are not type-only, followed to the end. */
function runtimeClosure(entry: string): string[] {
  const seen = new Set([entry]);
  const queue = [entry];
  for (let file = queue.shift(); file; file = queue.shift()) {
    for (const { to, types } of GRAPH.get(file) ?? []) {
      if (types || seen.has(to)) continue;
      seen.add(to);
      queue.push(to);
    }
  }
  return [...seen].map(inSrc).sort();
}

/** The strongly connected components of more than one file (or a file importing itself): Tarjan's algorithm. */
function circles(): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const { to } of GRAPH.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(file, Math.min(low.get(file)!, index.get(to)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    const selfImport = GRAPH.get(file)!.some((e) => e.to === file);
    if (component.length > 1 || selfImport) found.push(component.map(inSrc).sort());
  };
  for (const file of FILES) if (!index.has(file)) visit(file);
  return found;
}

test('every folder of src/ is a layer of the table, and every layer is a folder', () => {
  const folders: string[] = [];
  for (const entry of readdirSync(SRC, { withFileTypes: true })) {
    if (!entry.isDirectory()) {
      assert.is(
        entry.name,
        PUBLIC_SURFACE,
        `src/${entry.name}: the only file at the top of src/ is ${PUBLIC_SURFACE}; put it in a layer`,
      );
    } else if (entry.name === 'tools') {
      const tools = readdirSync(join(SRC, 'tools'), { withFileTypes: true });
      for (const tool of tools)
        assert.ok(tool.isDirectory(), `src/tools/${tool.name}: each tool is a folder of its own`);
      folders.push(...tools.map((tool) => `tools/${tool.name}`));
    } else {
      folders.push(entry.name);
    }
  }
  assert.equal(
    folders.sort(),
    [...LAYER_NAMES].sort(),
    'the folders of src/ are the layers of LAYERS in eslint.config.js',
  );
});

test('docs/architecture.md has one line per layer, naming it', () => {
  const lines = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8').split('\n');
  for (const layer of LAYER_NAMES) {
    const items = lines.filter((line) => line.startsWith(`- \`src/${layer}/\``));
    assert.is(items.length, 1, `docs/architecture.md: one list item starting with "- \`src/${layer}/\`"`);
  }
  const named = lines.flatMap((line) => /^- `src\/(.+?)\/`/.exec(line)?.[1] ?? []);
  assert.equal(
    named.filter((layer) => !LAYER_NAMES.includes(layer)),
    [],
    'docs/architecture.md names no layer the table lacks',
  );
});

test('no import circle in src/, type imports included', () => {
  assert.ok(FILES.length > 50, 'src/ was read');
  assert.equal(circles(), [], 'files that import each other, directly or through others');
});

// What `unified-ai-mock conformance`, the OpenAPI generator and the verdict layer (every file of it: the
// validating proxy loads its checks and reporters, client-check its report plumbing) load: none of the server's parts.
const SERVER_PARTS = ['handlers', 'media', 'pipeline', 'app', 'server'];
const VERDICT = tsFiles(join(SRC, 'verdict')).map(inSrc);
for (const [name, entries] of [
  ['src/tools/conformance/cli.ts', ['tools/conformance/cli.ts']],
  ['src/tools/gateway/cli.ts', ['tools/gateway/cli.ts']],
  ['src/tools/openapi/index.ts', ['tools/openapi/index.ts']],
  ['src/verdict/', VERDICT],
] as const) {
  test(`${name} loads no handler, encoder, pipeline step or app`, () => {
    const loaded = [...new Set(entries.flatMap((entry) => runtimeClosure(join(SRC, entry))))].sort();
    assert.ok(loaded.length > entries.length, `${name} was followed`);
    const parts = loaded.filter((file) => SERVER_PARTS.includes(layerOf(join(SRC, file)) ?? ''));
    assert.equal(parts, [], `${name} loads ${loaded.length} files of src/`);
  });
}

test.run();
