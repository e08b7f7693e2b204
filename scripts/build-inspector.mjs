// Build step: bundles the request inspector (inspector/, Preact) into dist/inspector/ with esbuild,
// beside its page and stylesheet. Everything the page loads is in the package: no CDN, nothing fetched at run time.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'inspector');

/** Writes dist/inspector/{index.html, inspector.js, inspector.css}; `out` for tests that build elsewhere. */
export async function buildInspector(out = join(root, 'dist', 'inspector')) {
  mkdirSync(out, { recursive: true });
  await build({
    entryPoints: [join(source, 'main.tsx')],
    outfile: join(out, 'inspector.js'),
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome111', 'firefox111', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync(join(source, 'index.html'), join(out, 'index.html'));
  copyFileSync(join(source, 'inspector.css'), join(out, 'inspector.css'));
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildInspector();
