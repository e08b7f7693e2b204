/**
 * Keys no JSON the mock reads may hold, however they are spelled: a merge or a lookup by key that meets one of them
 * can reach an object's prototype (`__proto__`, `constructor.prototype`), so they are refused wherever a body, a
 * fault rule, a latency profile or a configuration is read, as the JSON parsers of web frameworks refuse them.
 */
export const FORBIDDEN_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

const forbidden = new Set(FORBIDDEN_KEYS);

/**
 * False when a JSON text cannot hold a forbidden key, however escaped: a few native searches of the text, so a body
 * that cannot pays next to nothing. True means it may (a word in a string counts too): look with forbiddenKeyAt.
 * Each key is written either as it is, or with at least one of its characters escaped: every character of the three
 * names lies between U+005F and U+0079, so its escape starts \u005, \u006 or \u007.
 */
export function mayHoldForbiddenKey(text: string): boolean {
  if (text.includes('__proto__') || text.includes('constructor') || text.includes('prototype')) return true;
  for (let at = text.indexOf('\\u00'); at >= 0; at = text.indexOf('\\u00', at + 4)) {
    const c = text.charCodeAt(at + 4);
    if (c >= 0x35 && c <= 0x37) return true;
  }
  return false;
}

const pointerPart = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * The JSON pointer of the first forbidden key of a parsed JSON value (its own keys, as JSON.parse makes them, at any
 * depth), or undefined. A walk without recursion, so no nesting can overflow the stack.
 */
export function forbiddenKeyAt(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [v, at] = top;
    if (!v || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) if (v[i] && typeof v[i] === 'object') stack.push([v[i], `${at}/${i}`]);
      continue;
    }
    const keys = Object.keys(v);
    for (const key of keys) if (forbidden.has(key)) return `${at}/${pointerPart(key)}`;
    for (let i = keys.length - 1; i >= 0; i--) {
      const child = (v as Record<string, unknown>)[keys[i]!];
      if (child && typeof child === 'object') stack.push([child, `${at}/${pointerPart(keys[i]!)}`]);
    }
  }
  return undefined;
}

/** What a refusal of a forbidden key says, given its pointer: which key, where, and the rule. */
export function forbiddenKeyMessage(pointer: string): string {
  const key = pointer.slice(pointer.lastIndexOf('/') + 1);
  return `the key "${key}" at ${pointer} is not allowed: ${FORBIDDEN_KEYS.join(', ')} are refused as keys, however escaped, so that nothing read can reach an object's prototype`;
}
