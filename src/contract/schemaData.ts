import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SCHEMAS_DIR } from '../lib/paths.js';

const files = new Map<string, unknown>();

/** The parsed JSON of one file of schemas/, read once: for code that needs a schema's data (a default, a bound), not a
 * validator. */
export function schemaFile(file: string): unknown {
  let data = files.get(file);
  if (data === undefined)
    files.set(file, (data = JSON.parse(readFileSync(join(SCHEMAS_DIR, file), 'utf8')) as unknown));
  return data;
}

/**
 * The value at a JSON pointer inside a file of schemas/, e.g. `'/$defs/fault/properties/retryAfter/maximum'`.
 * Throws when there is none, so code that reads a bound from a schema fails at start-up when the schema moves it.
 */
function schemaValue(file: string, pointer: string): unknown {
  let node = schemaFile(file);
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
    if (node === undefined) throw new Error(`schemas/${file} has nothing at ${pointer}`);
  }
  return node;
}

/** A number at a JSON pointer inside a file of schemas/ (a maximum, a default); throws when it is not one. */
export function schemaNumber(file: string, pointer: string): number {
  const value = schemaValue(file, pointer);
  if (typeof value !== 'number') throw new Error(`schemas/${file} at ${pointer} is not a number`);
  return value;
}

/** A text at a JSON pointer inside a file of schemas/ (a pattern); throws when it is not one. */
export function schemaText(file: string, pointer: string): string {
  const value = schemaValue(file, pointer);
  if (typeof value !== 'string') throw new Error(`schemas/${file} at ${pointer} is not a text`);
  return value;
}
