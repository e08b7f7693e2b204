import { schemaFile } from './schemaData.js';
import { SCHEMA_BASE } from './validators/sources.js';

/**
 * The fields a request schema lists, at every depth where it lists them (an object with `properties`,
 * the items of an array of such objects): a body field not among them is accepted and ignored outside
 * --strict, and the pipeline names it (header x-mock-ignored-fields, the journal's ignoredFields).
 */
type Shape =
  | { readonly kind: 'object'; readonly known: ReadonlySet<string>; readonly children: ReadonlyMap<string, Shape> }
  | { readonly kind: 'array'; readonly items: Shape };

/** The response header that names the ignored fields (also in the OpenAPI document's success headers). */
export const IGNORED_FIELDS_HEADER = 'x-mock-ignored-fields';

type Node = { readonly [keyword: string]: unknown };

/** A top-level `$ref` to another file of schemas/ (admin-fault-rule-request.json is one), followed. */
function resolved(node: Node): Node {
  const ref = node.$ref;
  if (typeof ref !== 'string' || ref.startsWith('#') || ref.includes('#')) return node;
  return resolved(schemaFile(ref) as Node);
}

/** The shape of a schema node, or undefined where nothing can be ignored (no properties listed, or a closed object). */
function shapeOfNode(raw: Node): Shape | undefined {
  const node = resolved(raw);
  if (node.items && typeof node.items === 'object') {
    const items = shapeOfNode(node.items as Node);
    return items && { kind: 'array', items };
  }
  const properties = node.properties as Readonly<Record<string, Node>> | undefined;
  // A closed object (additionalProperties: false) refuses an unknown field: validation has answered it already.
  if (!properties || node.additionalProperties !== undefined) return undefined;
  const children = new Map<string, Shape>();
  for (const [name, child] of Object.entries(properties)) {
    const shape = shapeOfNode(child);
    if (shape) children.set(name, shape);
  }
  return { kind: 'object', known: new Set(Object.keys(properties)), children };
}

const shapes = new Map<string, Shape | undefined>();

/** The shape of a request schema by `$id` (a file of schemas/), built once. */
export function shapeOf(schemaId: string): Shape | undefined {
  if (!shapes.has(schemaId)) shapes.set(schemaId, shapeOfNode(schemaFile(schemaId.slice(SCHEMA_BASE.length)) as Node));
  return shapes.get(schemaId);
}

// A pointer segment as a header carries it: ~ and / escaped as JSON Pointer says, then every byte
// outside a small safe set percent-encoded (a comma separates fields; a header takes no control
// characters and no raw non-ASCII), so the list stays unambiguous and any field name fits.
const SAFE = /^[A-Za-z0-9_.!*'()$@:;=+-]*$/;
function segment(key: string): string {
  const escaped = key.replace(/~/g, '~0').replace(/\//g, '~1');
  if (SAFE.test(escaped)) return escaped;
  let out = '';
  for (const ch of escaped)
    out += /[A-Za-z0-9_.!*'()$@:;=+~-]/.test(ch)
      ? ch
      : [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  return out;
}

/**
 * The body fields the shape does not list, as JSON pointers (`/tools`, `/messages/0/tool_calls`), in
 * body order; at most `max`, then `...`. `name` rewrites each field name first (the secret mask: a key
 * sent as a field name is named masked). On the hot path most bodies have none: the walk builds no
 * string until it finds one, so it costs a key lookup per field of each listed object.
 */
export function unknownFields(
  shape: Shape,
  body: unknown,
  max: number,
  name: (key: string) => string = same,
): readonly string[] {
  // Most bodies have no unknown field: a plain check first, with no path kept and nothing allocated.
  if (!holdsUnknown(shape, body)) return NONE;
  const out: string[] = [];
  const path: (string | number)[] = [];
  const pointer = (key: string) =>
    `${path.map((p) => `/${typeof p === 'number' ? p : segment(p)}`).join('')}/${segment(name(key))}`;
  walk(shape, body, path, out, max, pointer);
  return out;
}

const same = (key: string): string => key;
const NONE: readonly string[] = Object.freeze([]);

/** Whether a value holds a field its shape does not list, at any depth. */
function holdsUnknown(s: Shape, value: unknown): boolean {
  if (s.kind === 'array') {
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) if (holdsUnknown(s.items, value[i])) return true;
    return false;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const { known, children } = s;
  for (const key in value) {
    if (!known.has(key)) return true;
    const child = children.size === 0 ? undefined : children.get(key);
    if (child && holdsUnknown(child, (value as Record<string, unknown>)[key])) return true;
  }
  return false;
}

/** Walks one value; false once the list is full (`...` added), to stop. */
function walk(
  s: Shape,
  value: unknown,
  path: (string | number)[],
  out: string[],
  max: number,
  pointer: (key: string) => string,
): boolean {
  if (s.kind === 'array') {
    if (!Array.isArray(value)) return true;
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      const more = walk(s.items, value[i], path, out, max, pointer);
      path.pop();
      if (!more) return false;
    }
    return true;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return true;
  const { known, children } = s;
  for (const key in value) {
    if (!known.has(key)) {
      if (out.length === max) {
        out.push('...');
        return false;
      }
      out.push(pointer(key));
      continue;
    }
    if (children.size === 0) continue;
    const child = children.get(key);
    if (!child) continue;
    path.push(key);
    const more = walk(child, (value as Record<string, unknown>)[key], path, out, max, pointer);
    path.pop();
    if (!more) return false;
  }
  return true;
}

/** The header value of a list of ignored fields: comma-separated, at most `maxChars` long (then `...` ends it). */
export function ignoredFieldsHeader(fields: readonly string[], maxChars: number): string {
  let out = '';
  for (const field of fields) {
    const next = out ? `${out},${field}` : field;
    if (next.length > maxChars) return out ? `${out},...` : '...';
    out = next;
  }
  return out;
}
