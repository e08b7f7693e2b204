import type { Ajv2020 } from 'ajv/dist/2020.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { requireCjs } from '../../lib/require.js';
import { dirname } from 'node:path';
import { SCHEMAS_DIR } from '../../lib/paths.js';
import { compilers } from './compile.js';
import { GENERATED_FILE, GROUPS } from './generated.js';
import { isStrictId, readSchemas, SUBSCHEMA_IDS, type SchemaVariant } from './sources.js';

/**
 * The validators of every schema in `dir` as one CommonJS module (Ajv's standalone code), so a server
 * loads them instead of compiling them. Ajv checks every schema against the meta-schema here, so a bad
 * schema or a duplicate `$id` fails the build.
 */
export function generateModule(dir: string = SCHEMAS_DIR): string {
  const { variants, hash } = readSchemas(dir);
  const { all, first } = compilers(variants, true);
  const standaloneCode = (
    requireCjs('ajv/dist/standalone') as { default: (ajv: Ajv2020, refs: Record<string, string>) => string }
  ).default;
  const only = (keep: (v: SchemaVariant) => boolean) =>
    Object.fromEntries(variants.filter(keep).map((v) => [v.id, v.id]));
  const code: Record<(typeof GROUPS)[number], string> = {
    all: standaloneCode(all, {
      ...only((v) => !isStrictId(v.id)),
      ...Object.fromEntries(Object.values(SUBSCHEMA_IDS).map((id) => [id, id])),
    }),
    first: standaloneCode(
      first,
      only((v) => v.request && !isStrictId(v.id)),
    ),
    strictAll: standaloneCode(
      all,
      only((v) => isStrictId(v.id)),
    ),
    strictFirst: standaloneCode(
      first,
      only((v) => isStrictId(v.id)),
    ),
  };
  // Each group is a factory: its code is only parsed, not run, until a validator of the group is needed.
  // `exports` inside shadows the module's own, so Ajv's `exports["id"] = ...` lines fill the group.
  const groups = GROUPS.map(
    (g) => `exports.${g} = function (__formats, require) {\nconst exports = {};\n${code[g]}\nreturn exports;\n};`,
  );
  return `"use strict";\n// Generated from schemas/*.json by the build (scripts/generate.mjs); do not edit.\nexports.hash = ${JSON.stringify(hash)};\n${groups.join('\n')}\n`;
}

/** Writes the generated module where the built server looks for it; returns its path. */
export function writeGenerated(file: string = GENERATED_FILE, dir: string = SCHEMAS_DIR): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, generateModule(dir));
  return file;
}
