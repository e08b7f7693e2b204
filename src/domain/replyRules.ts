import type { ErrorObject } from 'ajv';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './config.js';
import { problemLines } from './problems.js';
import { FIXTURES_DIR } from '../lib/paths.js';
import { forbiddenKeyAt, forbiddenKeyMessage } from '../lib/keys.js';
import { schemaId, type SchemaRegistry } from '../contract/schemas.js';
import { pointerToParam } from '../contract/validation.js';
import { compileRules, type CompiledRule, type ReplyRule } from '../text/replies.js';

/** The schema violations of rules in the terms a person editing the file uses. */
function describe(errors: readonly ErrorObject[], file?: string): string[] {
  // A match with no condition fails each anyOf branch (and minProperties); the anyOf itself says it best.
  const anyOfAt = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  const inFile = file ? ` in ${file}` : '';
  return errors.flatMap((e) => {
    if (e.keyword === 'anyOf') {
      const needed = (e.schema as { required: string[] }[]).flatMap((b) => b.required).join(', ');
      return [`${pointerToParam(e.instancePath) ?? '(root)'}${inFile}: needs at least one of ${needed}`];
    }
    if (anyOfAt.has(e.instancePath) && (e.keyword === 'required' || e.keyword === 'minProperties')) return [];
    return problemLines([e], { file });
  });
}

/** The rules' regular expressions that do not compile, each by where it is: found beside the schema's problems. */
function badRegexes(data: unknown, file?: string, at = (i: number) => `rules[${i}].match.regex`): string[] {
  const rules = (data as { rules?: unknown } | null)?.rules;
  if (!Array.isArray(rules)) return [];
  return rules.flatMap((rule: unknown, i) => {
    const match = (rule as { match?: { regex?: unknown; flags?: unknown } } | null)?.match;
    if (typeof match?.regex !== 'string') return [];
    try {
      new RegExp(match.regex, typeof match.flags === 'string' && /^[imsu]*$/.test(match.flags) ? match.flags : '');
      return [];
    } catch (err) {
      return [`${at(i)}${file ? ` in ${file}` : ''}: not a valid regular expression (${(err as Error).message})`];
    }
  });
}

/** Reads, checks and compiles one rules file; every problem is a ConfigError that names the file (the CLI exits 2). */
function readRules(path: string, schemas: SchemaRegistry): CompiledRule[] {
  const fail = (problems: string[]) =>
    new ConfigError(`invalid reply rules:\n${[...new Set(problems)].map((p) => `  ${p}`).join('\n')}`);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError(`cannot read the reply rules file ${path}: ${(err as Error).message}`);
  }
  const forbidden = forbiddenKeyAt(data);
  if (forbidden !== undefined) throw fail([`${forbiddenKeyMessage(forbidden)} (in ${path})`]);
  const problems = [...describe(schemas.check(schemaId('reply-rules.json'), data), path), ...badRegexes(data, path)];
  const rules = (data as { rules?: ReplyRule[] }).rules ?? [];
  const seen = new Set<string>();
  rules.forEach((rule, i) => {
    // The id is how a request picks a rule by header, so within one file it must name one rule.
    if (seen.has(rule.id)) problems.push(`rules[${i}].id in ${path}: "${rule.id}" names an earlier rule too`);
    seen.add(rule.id);
  });
  if (problems.length) throw fail(problems);
  try {
    return compileRules(rules);
  } catch (err) {
    throw fail([`${path}: ${(err as Error).message}`]);
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
  const own = errors.map((e) => ({ ...e, instancePath: e.instancePath.replace(/^\/rules\/0/, '') }));
  const problems = [...describe(own), ...badRegexes({ rules: [input] }, undefined, () => 'match.regex')];
  if (problems.length) throw fail(problems.map((p) => p.replace(/^\(root\): /, '')).join('; '));
  try {
    return compileRules([input as ReplyRule])[0]!;
  } catch (err) {
    throw fail((err as Error).message);
  }
}
