import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Finds the package root, the folder that holds package.json, from both src/ (tsx) and dist/ (built). */
function findRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${start}`);
    dir = parent;
  }
  return dir;
}

/** The installed package's root folder. */
export const ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));
/** Folder of the JSON Schema data files. */
export const SCHEMAS_DIR = join(ROOT, 'schemas');
/** Folder of the fixtures: model catalogue, voices, keys, reply rules. */
export const FIXTURES_DIR = join(ROOT, 'fixtures');
/** Folder of the conformance suite's case files. */
export const CONFORMANCE_DIR = join(ROOT, 'conformance');

let version: string | undefined;
/** The version in the installed package's package.json. */
export const packageVersion = (): string =>
  (version ??= (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version);
