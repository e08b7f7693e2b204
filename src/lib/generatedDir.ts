import { fileURLToPath } from 'node:url';

/**
 * Where the build writes what it derives from the schemas and packages (dist/generated/). Running
 * from src/ it names src/generated/, which does not exist, so everything is computed at start instead.
 */
export const GENERATED_DIR = fileURLToPath(new URL('../generated/', import.meta.url));
