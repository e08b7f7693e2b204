import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES_DIR } from '../paths.js';
import { schemaId, type SchemaRegistry } from '../schemas.js';
import { compileRules, type CompiledRule, type ReplyRule } from './replies.js';

function readRules(path: string, schemas: SchemaRegistry): ReplyRule[] {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`reply rules ${path}: ${(err as Error).message}`);
  }
  const errors = schemas.check(schemaId('reply-rules.json'), data);
  if (errors.length) throw new Error(`reply rules ${path}: ${errors[0]!.instancePath || '(root)'} ${errors[0]!.message}`);
  return (data as { rules: ReplyRule[] }).rules;
}

/** The user's rules file (if any) followed by the built-in rules, checked against the schema and compiled. */
export function loadReplyRules(schemas: SchemaRegistry, userFile?: string): CompiledRule[] {
  const builtIn = readRules(join(FIXTURES_DIR, 'replies.json'), schemas);
  const user = userFile ? readRules(userFile, schemas) : [];
  return compileRules([...user, ...builtIn]);
}
