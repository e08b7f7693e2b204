/** Minimal JSON Pointer (RFC 6901) helpers over plain JSON values, used to build case bodies. */

const parse = (pointer: string): string[] =>
  pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));

type Container = Record<string, unknown> | unknown[];

const isContainer = (v: unknown): v is Container => typeof v === 'object' && v !== null;

/** A deep copy of a JSON value. */
export const clone = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));

/** The value at a pointer, or undefined when any step is missing. */
export function getAt(doc: unknown, pointer: string): unknown {
  let node = doc;
  for (const key of parse(pointer)) {
    if (!isContainer(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** Sets the value at a pointer in place, creating objects (or arrays, for numeric steps) on the way. */
export function setAt(doc: Record<string, unknown>, pointer: string, value: unknown): void {
  const keys = parse(pointer);
  let node: Container = doc;
  keys.forEach((key, i) => {
    const record = node as Record<string, unknown>;
    if (i === keys.length - 1) {
      record[key] = value;
      return;
    }
    if (!isContainer(record[key])) record[key] = /^\d+$/.test(keys[i + 1]!) ? [] : {};
    node = record[key] as Container;
  });
}

/** Removes the member at a pointer in place; nothing happens when it is absent. */
export function unsetAt(doc: Record<string, unknown>, pointer: string): void {
  const keys = parse(pointer);
  const parent = getAt(doc, keys.length > 1 ? '/' + keys.slice(0, -1).join('/') : '');
  if (isContainer(parent) && !Array.isArray(parent)) delete parent[keys[keys.length - 1]!];
}

/** A pointer in dotted form for case ids: /messages/0/role -> messages.0.role. */
export const dotted = (pointer: string): string => parse(pointer).join('.');
