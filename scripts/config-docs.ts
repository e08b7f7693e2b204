// Writes the tables of docs/configuration.md from schemas/config.json: the flags of serve, every config field
// and the fields of a key. Each table sits between `<!-- generated: NAME ... -->` and `<!-- end generated -->`;
// `npm run docs:config` rewrites them, and test/docs/config.test.ts fails when the file differs from what this renders.
// The text of each row is the field's `description`: to change a row, change the schema.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_SCHEMA, defaultKeys, type SettingSchema } from '../src/domain/config.js';
import { ROOT } from '../src/lib/paths.js';

export const CONFIG_DOC = join(ROOT, 'docs', 'configuration.md');

/** A node of schemas/config.json with the bounds a table shows. */
interface Node extends SettingSchema {
  readonly properties?: Readonly<Record<string, Node>>;
  readonly items?: Node;
  readonly anyOf?: readonly Node[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly format?: string;
  readonly required?: readonly string[];
  readonly $ref?: string;
  readonly additionalProperties?: Node | boolean;
}

/** One field, a group (pacing, timeouts, ...) included, by its dotted path. */
interface Field {
  readonly path: string;
  readonly node: Node;
  readonly required: boolean;
}

const SCHEMA = CONFIG_SCHEMA as Node;

// Where the rest of the docs say more about a field: a link after its meaning.
const SEE: Readonly<Record<string, string>> = {
  keys: '[Keys](#keys)',
  bodyMemory: '[Limits and timeouts](reliability.md#limits-and-timeouts)',
  replyRules: '[reply rules](mock.md#reply-rules)',
  pacing: '[pacing](faults.md#pacing)',
  'pacing.timeToFirstTokenMs': '[pacing](faults.md#pacing)',
  faultRules: '[fault rules](faults.md#fault-rules)',
  adminToken: '[admin API](faults.md#admin-api)',
  timeouts: '[Limits and timeouts](reliability.md#limits-and-timeouts)',
  'keys[].rateLimit': '[rate limits](faults.md#rate-limits)',
};

/** The fields of a node, each group followed by its members, `$schema` left out. */
function fieldsOf(node: Node, prefix = ''): Field[] {
  return Object.entries(node.properties ?? {})
    .filter(([name]) => !name.startsWith('$'))
    .flatMap(([name, child]) => [
      { path: prefix + name, node: child, required: !!node.required?.includes(name) },
      ...fieldsOf(child, `${prefix}${name}.`),
    ]);
}

const code = (value: unknown) => `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
const cell = (text: string) => text.replace(/\|/g, '\\|');
const row = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
const table = (head: readonly string[], rows: readonly string[][]) =>
  [row(head), `|${head.map(() => '---|').join('')}`, ...rows.map(row)].join('\n');

function range(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return ` ${min}–${max}`;
  if (min !== undefined) return ` ≥ ${min}`;
  return max !== undefined ? ` ≤ ${max}` : '';
}

function text(n: Node): string {
  if (n.format === 'uri') return 'URI';
  const [min = 0, max] = [n.minLength, n.maxLength];
  if (max !== undefined) return `string, ${min > 0 ? `${min}–${max}` : `at most ${max}`} characters`;
  if (min > 1) return `string, at least ${min} characters`;
  return min === 1 ? 'non-empty string' : 'string';
}

/** What an array holds: strings, objects, or the items of another schema file (linked). */
function itemsOf(items: Node | undefined): string {
  if (items?.$ref) return `[schemas/${items.$ref}](../schemas/${items.$ref})`;
  return items?.type ? `${String(items.type)}s` : 'values';
}

/** "Type and range" of a field, from its schema. */
function typeOf(n: Node): string {
  if (n.anyOf) return n.anyOf.map(typeOf).join(', or ');
  if (n.const !== undefined) return code(JSON.stringify(n.const));
  if (n.enum) return `one of ${n.enum.map(code).join(', ')}`;
  if (n.type === 'integer' || n.type === 'number') return n.type + range(n.minimum, n.maximum);
  if (n.type === 'string') return text(n);
  if (n.type === 'array') return `array of ${itemsOf(n.items)}${n.minItems ? `, at least ${n.minItems}` : ''}`;
  // A map (profiles by name, models' profiles): what each value is, a schema of another file linked.
  const values = n.additionalProperties;
  if (n.type === 'object' && typeof values === 'object') {
    const [file, pointer] = (values.$ref ?? '').split('#');
    const what = file
      ? `[schemas/${file}](../schemas/${file})${pointer ? ` \`${pointer}\`` : ''}`
      : `${String(values.type)}s`;
    return `object: names to ${what}`;
  }
  if (n.type === 'object') return 'object: the fields below';
  return String(n.type ?? 'any');
}

const MiB = 1024 * 1024;

// The default of `keys` is a file, not a value the schema can hold (src/domain/config.ts, defaultConfig).
const KEY_NAMES = defaultKeys().map((k) => code(k.key));
const DEFAULT_KEYS = `${KEY_NAMES.join(', ')} (\`fixtures/keys.json\`)`;

/** A default as the docs show it: the value, read for the reader where that helps (20 MiB, a date); "unset" or
 * "required" when there is none. */
function defaultOf({ path, node, required }: Field): string {
  const value = node.default;
  if (path === 'keys') return DEFAULT_KEYS;
  if (value === undefined) return node.properties ? '' : required ? 'required' : 'unset';
  if (typeof value === 'number' && /\bbytes\b/.test(node.description ?? '') && value >= MiB && value % MiB === 0)
    return `${code(value)} (${value / MiB} MiB)`;
  if (typeof value === 'number' && /\bUnix seconds\b/.test(node.description ?? ''))
    return `${code(value)} (${new Date(value * 1000).toISOString().replace('.000Z', 'Z')})`;
  return code(value);
}

/** What a field means: its description, with a link to where the docs say more. */
function meaningOf({ path, node }: Field): string {
  const see = SEE[path];
  return `${node.description ?? ''}${see ? ` (see ${see})` : ''}`;
}

// Keys given with --api-key: the one thing the flag does that the schema cannot say (src/cli/main.ts, LISTS).
const API_KEYS = `. Keys from flags are labelled \`cli-1\`, \`cli-2\`, ... and have the scopes of the first default key (${(defaultKeys()[0]?.scopes ?? []).map(code).join(', ')})`;

/** The flags of serve: `--config`, every field with an `x-flag`, `--help`. */
export function flagsTable(): string {
  const rows = [
    [
      '`--config FILE`',
      '',
      '',
      'JSON configuration, checked against `schemas/config.json` at start-up; a bad field is named and the exit code is 2',
    ],
  ];
  for (const field of fieldsOf(SCHEMA)) {
    const flag = field.node['x-flag'];
    if (!flag) continue;
    const { node, path } = field;
    // A switch turns its field on, or off when its name says so (--no-fault-headers), as in src/cli/main.ts.
    const sets = node.type === 'boolean' ? `${path}: ${!flag.startsWith('--no-')}` : path;
    const values = node.enum ? `: ${node.enum.map(code).join(', ')}` : '';
    const short = node['x-short'] ? ` (\`${node['x-short']}\`)` : '';
    const usage = code(flag) + short + (node.type === 'array' ? ' (repeatable)' : '');
    rows.push([usage, code(sets), defaultOf(field), meaningOf(field) + values + (path === 'keys' ? API_KEYS : '')]);
  }
  rows.push(['`--help` (`-h`)', '', '', 'prints the flags, one sentence each']);
  rows.push(['`--version` (`-v`)', '', '', 'prints the version']);
  return table(['Flag', 'Config field', 'Default', 'Meaning'], rows);
}

/** Every field of the config file, groups and their members by dotted path (`timeouts.requestMs`). */
export function fieldsTable(): string {
  const rows = fieldsOf(SCHEMA).map((f) => [code(f.path), typeOf(f.node), defaultOf(f), meaningOf(f)]);
  return table(['Field', 'Type and range', 'Default', 'Meaning'], rows);
}

/** The fields of one key of `keys`. */
export function keyFieldsTable(): string {
  const rows = fieldsOf(SCHEMA.properties!.keys!.items!).map((f) => {
    const full = { ...f, path: `keys[].${f.path}` };
    return [code(f.path), typeOf(f.node), defaultOf(full), meaningOf(full)];
  });
  return table(['Key field', 'Type and range', 'Default', 'Meaning'], rows);
}

const TABLES: Readonly<Record<string, () => string>> = {
  'config flags': flagsTable,
  'config fields': fieldsTable,
  'config key fields': keyFieldsTable,
};
const END = '<!-- end generated -->';

/** The document with every generated table rendered afresh; throws when a table's markers are missing. */
export function renderConfigDoc(doc: string): string {
  let out = doc;
  for (const [name, render] of Object.entries(TABLES)) {
    const start = `<!-- generated: ${name} (from schemas/config.json by npm run docs:config; edit the schema, not this table) -->`;
    const at = out.indexOf(`<!-- generated: ${name} (`);
    const end = out.indexOf(END, at);
    if (at < 0 || end < 0)
      throw new Error(
        `${CONFIG_DOC}: no markers for the table '${name}' (<!-- generated: ${name} (...) --> ... ${END})`,
      );
    out = `${out.slice(0, at)}${start}\n${render()}\n${out.slice(end)}`;
  }
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const doc = readFileSync(CONFIG_DOC, 'utf8');
  const next = renderConfigDoc(doc);
  writeFileSync(CONFIG_DOC, next);
  process.stdout.write(
    next === doc
      ? 'docs/configuration.md is up to date\n'
      : 'docs/configuration.md: tables rewritten from schemas/config.json\n',
  );
}
