import type { ValidateFunction } from 'ajv';
import { existsSync } from 'node:fs';
import { requireCjs } from '../../lib/require.js';
import { join } from 'node:path';
import { GENERATED_DIR } from '../../lib/generatedDir.js';
import { allFormats } from './formats.js';
import { isStrictId } from './sources.js';

/** A validator by `$id`: the one that reports every error, or the one that stops at the first. */
export type Lookup = (allErrors: boolean, id: string) => ValidateFunction | undefined;

/** The four groups of validators in the generated module, each built on its first use. */
export const GROUPS = ['all', 'first', 'strictAll', 'strictFirst'] as const;
type Group = (typeof GROUPS)[number];

/** The generated module's shape: the hash of its sources, and one factory per group. */
type GeneratedModule = { hash: string } & Record<
  Group,
  (formats: unknown, require: NodeJS.Require) => Record<string, ValidateFunction>
>;

/** Where the build writes the generated validators: dist/generated/, next to the compiled code that loads them. */
export const GENERATED_FILE = join(GENERATED_DIR, 'validators.cjs');

/**
 * The build's generated validators, when they were generated from sources with this hash; undefined
 * when the file is missing (running from src/) or stale (schemas changed since the build).
 */
export function loadGenerated(
  hash: string,
  schemas: ReadonlyMap<string, object>,
  file: string = GENERATED_FILE,
): Lookup | undefined {
  if (!existsSync(file)) return undefined;
  const mod = requireCjs(file) as GeneratedModule;
  if (mod.hash !== hash) return undefined;
  const formats = allFormats();
  const built = new Map<Group, Record<string, ValidateFunction>>();
  const group = (name: Group) => {
    let fns = built.get(name);
    if (!fns) {
      // The generated code resolves Ajv's runtime helpers through this package, wherever the file lies.
      built.set(name, (fns = mod[name](formats, requireCjs)));
      // A compiled validator carries its schema; readers of the schema (the conformance runner) rely on it.
      for (const [id, fn] of Object.entries(fns)) (fn as { schema?: unknown }).schema = schemas.get(id);
    }
    return fns;
  };
  return (allErrors, id) => {
    const fns = group(isStrictId(id) ? (allErrors ? 'strictAll' : 'strictFirst') : allErrors ? 'all' : 'first');
    return Object.hasOwn(fns, id) ? fns[id] : undefined;
  };
}
