import type { ErrorObject } from 'ajv';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './config.js';
import { FIXTURES_DIR } from '../lib/paths.js';
import { forbiddenKeyAt, forbiddenKeyMessage } from '../lib/keys.js';
import { schemaId, type SchemaRegistry } from '../contract/schemas.js';
import { pointerToParam } from '../contract/validation.js';
import { compileRules, type CompiledRule, type ReplyRule } from '../text/replies.js';

/** The schema violations in the terms a person editing the file uses: at most three, most useful first. */
function describe(errors: readonly ErrorObject[]): string {
  // A match with no condition fails each anyOf branch (and minProperties); the anyOf itself says it best.
  const anyOfAt = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const lines = errors.flatMap((e) => {
    const where = pointerToParam(e.instancePath) ?? '(root)';
    const p = e.params as Record<string, unknown>;
    if (e.keyword === 'anyOf')
      return [
        `${where}: needs at least one of ${(e.schema as { required: string[] }[]).flatMap((b) => b.required).join(', ')}`,
      ];
    if (anyOfAt.has(e.instancePath) && (e.keyword === 'required' || e.keyword === 'minProperties')) return [];
    if (e.keyword === 'additionalProperties') return [`${where}: unknown property "${String(p.additionalProperty)}"`];
    return [`${where}: ${e.message ?? 'is invalid'}`];
  });
  return [...new Set(lines)].slice(0, 3).join('; ');
}

/** Reads, checks and compiles one rules file; every problem is a ConfigError that names the file (the CLI exits 2). */
function readRules(path: string, schemas: SchemaRegistry): CompiledRule[] {
  const fail = (problem: string) => new ConfigError(`reply rules file ${path}: ${problem}`);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw fail((err as Error).message);
  }
  const forbidden = forbiddenKeyAt(data);
  if (forbidden !== undefined) throw fail(forbiddenKeyMessage(forbidden));
  const errors = schemas.check(schemaId('reply-rules.json'), data);
  if (errors.length) throw fail(describe(errors));
  const rules = (data as { rules: ReplyRule[] }).rules;
  const seen = new Set<string>();
  for (const rule of rules) {
    // The id is how a request picks a rule by header, so within one file it must name one rule.
    if (seen.has(rule.id)) throw fail(`duplicate rule id "${rule.id}"`);
    seen.add(rule.id);
  }
  try {
    return compileRules(rules);
  } catch (err) {
    throw fail((err as Error).message);
  }
}

/**
 * The user's rules file (if any) followed by the built-in rules, each checked against the schema and compiled.
 * The array is new on every call and owned by one server: the programmatic API inserts rules into it.
 */
export function loadReplyRules(schemas: SchemaRegistry, userFile?: string): CompiledRule[] {
  const builtIn = readRules(join(FIXTURES_DIR, 'replies.json'), schemas);
  return [...(userFile ? readRules(userFile, schemas) : []), ...builtIn];
}

/** Checks one rule against the rule schema of reply-rules.json and compiles it; a bad rule throws an Error naming the
 * field. */
export function checkReplyRule(schemas: SchemaRegistry, input: unknown): CompiledRule {
  // Checked as a one-rule file, so the rule meets exactly the schema a rules file does.
  const errors = schemas.check(schemaId('reply-rules.json'), { rules: [input] });
  const fail = (problem: string) => new Error(`invalid reply rule: ${problem}`);
  if (errors.length) {
    const own = errors.map((e) => ({ ...e, instancePath: e.instancePath.replace(/^\/rules\/0/, '') }));
    throw fail(describe(own).replaceAll('(root): ', ''));
  }
  try {
    return compileRules([input as ReplyRule])[0]!;
  } catch (err) {
    throw fail((err as Error).message);
  }
}
