// @ts-check
// ESLint (flat config). Three jobs: the layer rule for src/ (which folder may import which),
// no import cycles in src/, the inspector, the bench, the tests or the scripts, and typescript-eslint's
// recommended rules as a baseline everywhere, the inspector's .tsx files included.
// Formatting is Prettier's job: eslint-config-prettier, last, turns off the rules that would fight it.
import prettier from 'eslint-config-prettier';
import { defineConfig } from 'eslint/config';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/: each folder, and the other folders it may import (besides itself and
 * node_modules). The one source of truth: the zones below are generated from it, and
 * test/architecture.test.ts checks docs/architecture.md against it. `'*'` means everything.
 * `peers: false`: a file in the folder may not import another file in the same folder.
 * src/index.ts (the public surface) may import everything; no layer but cli may import it.
 * @type {Record<string, { may: string[] | '*', peers?: false }>}
 */
export const LAYERS = {
  lib: { may: [] },
  contract: { may: ['lib'] },
  media: { may: ['lib'] },
  text: { may: ['lib', 'contract'] },
  domain: { may: ['lib', 'contract', 'media', 'text'] },
  pipeline: { may: ['lib', 'contract', 'text', 'domain'] },
  handlers: { may: ['lib', 'contract', 'media', 'text', 'domain', 'pipeline'], peers: false },
  verdict: { may: ['lib', 'contract', 'domain'] },
  relay: { may: ['lib', 'contract', 'text', 'domain', 'pipeline', 'verdict'] },
  app: { may: ['lib', 'contract', 'media', 'text', 'domain', 'pipeline', 'handlers', 'relay', 'tools/openapi'] },
  server: {
    may: ['lib', 'contract', 'media', 'text', 'domain', 'pipeline', 'handlers', 'app', 'relay', 'tools/clientCheck'],
  },
  'tools/openapi': { may: ['lib', 'contract', 'domain'] },
  'tools/conformance': { may: ['lib', 'contract', 'domain', 'verdict'] },
  'tools/clientCheck': { may: ['lib', 'contract', 'domain', 'verdict'] },
  'tools/gateway': { may: ['lib', 'contract', 'domain', 'verdict', 'tools/conformance'] },
  cli: { may: '*' },
};

/** The file at the top of src/ that re-exports the public surface. */
export const PUBLIC_SURFACE = 'index.ts';

/** One `import-x/no-restricted-paths` zone per layer: the layer's folder, and every folder (and the public surface) it
 * may not import. */
export function layerZones() {
  const zones = [];
  for (const [layer, { may, peers }] of Object.entries(LAYERS)) {
    if (may === '*') continue;
    const forbidden = Object.keys(LAYERS).filter((other) => other !== layer && !may.includes(other));
    const allowed = may.length > 0 ? `may import only ${may.join(', ')}` : 'may not import any other folder of src/';
    zones.push({
      target: `./src/${layer}`,
      from: [...forbidden.map((other) => `./src/${other}`), `./src/${PUBLIC_SURFACE}`],
      message: `Layer rule: src/${layer}/ ${allowed} (see LAYERS in eslint.config.js and docs/architecture.md).`,
    });
    if (peers === false) {
      zones.push({
        target: `./src/${layer}`,
        from: `./src/${layer}`,
        message: `Layer rule: a file in src/${layer}/ may not import another file in src/${layer}/; move what they share to a lower layer.`,
      });
    }
  }
  return zones;
}

const TS_FILES = ['**/*.ts', '**/*.mts', '**/*.cts', '**/*.tsx'];

export default defineConfig(
  { ignores: ['dist/', 'coverage/', '.nyc_output/', '**/node_modules/'] },
  {
    files: [...TS_FILES, '**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.recommended],
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      // A leading underscore marks a parameter or binding that is there on purpose and not used.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // So that no-cycle can read the .ts files an import leads to (the default is .js only).
      'import-x/extensions': ['.ts', '.js', '.mjs', '.cjs'],
      'import-x/external-module-folders': ['node_modules', 'node_modules/@types'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.mts', '.cts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: `${import.meta.dirname}/tsconfig.json` })],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: layerZones() }],
      // import-x skips type-only imports here; test/architecture.test.ts checks cycles with them too.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // An import the resolver cannot follow would slip past both rules above without a word.
      'import-x/no-unresolved': 'error',
    },
  },
  {
    // The bench, the tests and the scripts: no layers, but no import circle either (a circle there is as hard
    // to follow as one in src/), and no import the resolver cannot follow. tsconfig.check.json covers src/,
    // test/ and bench/; the scripts import src/ and node_modules only.
    files: ['bench/**/*.ts', 'test/**/*.ts', 'scripts/**/*.ts', 'scripts/**/*.mjs'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js', '.mjs', '.cjs'],
      'import-x/external-module-folders': ['node_modules', 'node_modules/@types'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.mts', '.cts'] },
      'import-x/resolver-next': [
        createTypeScriptImportResolver({ project: `${import.meta.dirname}/tsconfig.check.json` }),
      ],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // Built output (dist/) and the packed package exist only after `npm run build` and `npm pack`.
      'import-x/no-unresolved': ['error', { ignore: ['^unified-ai-mock$', '^\\.\\./dist/'] }],
    },
  },
  {
    // Not a layer of LAYERS: the inspector is a browser bundle of its own (esbuild), outside src/'s module graph,
    // and stays so: a file of src/ would pull Node-only code into the page.
    files: ['inspector/**/*.ts', 'inspector/**/*.tsx'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.tsx', '.js', '.json'],
      'import-x/external-module-folders': ['node_modules', 'node_modules/@types'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import-x/resolver-next': [
        createTypeScriptImportResolver({ project: `${import.meta.dirname}/inspector/tsconfig.json` }),
      ],
    },
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        {
          basePath: import.meta.dirname,
          zones: [
            {
              target: './inspector',
              from: './src',
              // The request record's and the latency view's one definitions: they import nothing and name no Node
              // type, and the page takes its types from them (type-only, so nothing of them is bundled). The fault
              // kinds' table imports nothing either: the page bundles it for the presets its rows name.
              except: ['./domain/journal/record.ts', './domain/latency/types.ts', './domain/faults/kinds.ts'],
              message:
                'The inspector is a browser bundle: it may not import src/ (Node code); share data through fixtures/ or the admin API.',
            },
          ],
        },
      ],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // As in src/: an import the resolver cannot follow would slip past the rule above.
      'import-x/no-unresolved': 'error',
    },
  },
  prettier,
);
