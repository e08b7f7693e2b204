/** A JSON Schema (or any part of one) as read from schemas/. */
export type Json = Record<string, unknown>;

const pascal = (s: string): string =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/** The components.schemas name of a schema `$id`, e.g. `.../chat-request.json` -> `ChatRequest`. */
export function componentName(id: string): string {
  const file = id.slice(id.lastIndexOf('/') + 1).replace(/\.json$/, '');
  return pascal(file);
}

/** A local reference to a component schema. */
export const schemaRef = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

const DEF = /^\/\$defs\/([^/]+)$/;

/** Where a `$ref` of the schema `base` points: the component name, or an error for anything unsupported. */
function resolveRef(ref: string, base: string, known: ReadonlyMap<string, Json>): { id: string; name: string } {
  const url = new URL(ref, base);
  const fragment = decodeURIComponent(url.hash.slice(1));
  url.hash = '';
  const id = url.href;
  if (!known.has(id)) throw new Error(`${base}: $ref ${ref} names no schema of schemas/`);
  if (!fragment) return { id, name: componentName(id) };
  const def = DEF.exec(fragment);
  if (!def)
    throw new Error(
      `${base}: $ref ${ref} points inside a schema; only whole schemas and top-level $defs can be components`,
    );
  return { id, name: componentName(id) + pascal(def[1]!) };
}

/** Copies a schema node, rewriting each `$ref` to a local component reference; reports the schemas it needs. */
function rewrite(node: unknown, base: string, known: ReadonlyMap<string, Json>, needs: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((v) => rewrite(v, base, known, needs));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string') {
      const target = resolveRef(v, base, known);
      needs.add(target.id);
      out.$ref = schemaRef(target.name).$ref;
    } else if (k === '$defs') {
      throw new Error(`${base}: $defs below the top level cannot become components`);
    } else out[k] = rewrite(v, base, known, needs);
  }
  return out;
}

/**
 * The components.schemas of a document: the schemas `roots` name and every schema they reference,
 * with `$id`/`$schema` dropped, top-level `$defs` lifted to components of their own, and every
 * `$ref` made local, so the document is self-contained. Keys are sorted for a stable output.
 */
export function componentSchemas(roots: readonly string[], known: ReadonlyMap<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = {};
  const queue = [...roots];
  const done = new Set<string>();
  while (queue.length) {
    const id = queue.shift()!;
    if (done.has(id)) continue;
    done.add(id);
    const schema = known.get(id);
    if (!schema) throw new Error(`No schema with $id ${id}`);
    const needs = new Set<string>();
    const { $id: _id, $schema: _dialect, $defs, ...body } = schema;
    const add = (name: string, value: unknown) => {
      if (name in out) throw new Error(`Two schemas would share the component name ${name}`);
      out[name] = rewrite(value, id, known, needs) as Json;
    };
    add(componentName(id), body);
    for (const [name, def] of Object.entries(($defs ?? {}) as Json)) add(componentName(id) + pascal(name), def);
    queue.push(...[...needs].filter((n) => !done.has(n)));
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
