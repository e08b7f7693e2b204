import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const own = fileURLToPath(new URL('../generated/', import.meta.url));

/**
 * Where the build writes what it derives from the schemas and packages (dist/generated/). Running from src/ it
 * names src/generated/, which does not exist, so everything is computed at start instead; unless the test runner
 * (test/run.ts) generated them from src/ for its run, in the folder UNIFIED_AI_MOCK_GENERATED_DIR names, so that
 * each test file's process loads them instead of computing them. What is found is used only when it was made from
 * the same sources (a hash, a package version); a build's own folder always comes first.
 */
export const GENERATED_DIR = existsSync(own) ? own : process.env.UNIFIED_AI_MOCK_GENERATED_DIR || own;
