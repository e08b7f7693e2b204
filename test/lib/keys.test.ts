import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { FORBIDDEN_KEYS, forbiddenKeyAt, forbiddenKeyMessage, mayHoldForbiddenKey } from '../../src/lib/keys.js';

/**
 * A JSON text of `value` with some characters of its keys written as \u escapes (as any JSON encoder may). Written
 * here rather than by editing JSON.stringify's text: a pattern for keys also matches inside string values (`":"`).
 */
const escapedKeys = (value: unknown, escape: (i: number) => boolean): string => {
  let n = 0;
  const spell = (key: string) =>
    [...key]
      .map((c) =>
        /^[a-z_]$/.test(c) && escape(n++)
          ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
          : JSON.stringify(c).slice(1, -1),
      )
      .join('');
  const write = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map((item) => write(item ?? null)).join(',')}]`;
    if (v && typeof v === 'object')
      return `{${Object.entries(v)
        .map(([k, item]) => `"${spell(k)}":${write(item)}`)
        .join(',')}}`;
    return JSON.stringify(v);
  };
  return write(value);
};

const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.string(), fc.integer(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.string({ unit: fc.constantFrom('a', 'p', 'o', '_', 't', '/', '~') }), tie('value'), {
    maxKeys: 4,
  }),
})).value;

/** The value with `key` added to one of its objects (a new object around it when it holds none), and where. */
function withKey(value: unknown, key: string, pick: number): { value: unknown; at: string } {
  const objects: [Record<string, unknown>, string][] = [];
  const walk = (v: unknown, at: string) => {
    if (!v || typeof v !== 'object') return;
    if (!Array.isArray(v)) objects.push([v as Record<string, unknown>, at]);
    for (const [k, c] of Object.entries(v)) walk(c, `${at}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`);
  };
  walk(value, '');
  if (!objects.length) return { value: JSON.parse(`{"${key}":${JSON.stringify(value) ?? 0}}`), at: `/${key}` };
  const [target, at] = objects[pick % objects.length]!;
  Object.defineProperty(target, key, { value: 1, enumerable: true, configurable: true, writable: true });
  return { value, at: `${at}/${key}` };
}

test('a forbidden key anywhere, each of its characters escaped or not, is suspected from the text and found parsed', () => {
  fc.assert(
    fc.property(
      json,
      fc.constantFrom(...FORBIDDEN_KEYS),
      fc.nat(),
      fc.func(fc.boolean()),
      (value, key, pick, escape) => {
        const planted = withKey(structuredClone(value), key, pick);
        const text = escapedKeys(planted.value, (i) => escape(i));
        assert.ok(mayHoldForbiddenKey(text), text);
        const parsed = JSON.parse(text) as unknown;
        const at = forbiddenKeyAt(parsed);
        assert.ok(at !== undefined && at.endsWith(`/${key}`), `${text}: ${at}`);
        assert.is(forbiddenKeyAt(structuredClone(value)), undefined);
      },
    ),
    { numRuns: 1000 },
  );
});

test('the search of the text lets ordinary bodies by: only those that may hold a forbidden key are walked', () => {
  assert.not.ok(mayHoldForbiddenKey('{"model":"gpt-4o","messages":[{"role":"user","content":"caf\\u00e9 \\n"}]}'));
  assert.ok(mayHoldForbiddenKey('{"content":"what does a constructor do?"}'), 'a word in a text: walked, not refused');
  assert.is(forbiddenKeyAt(JSON.parse('{"content":"what does a constructor do?"}')), undefined);
  assert.is(forbiddenKeyAt(JSON.parse('[[{"a":[{"__proto__":{}}]}]]')), '/0/0/a/0/__proto__');
  // Nesting that would overflow a recursive walk.
  const deep = JSON.parse(`${'['.repeat(20_000)}{"prototype":1}${']'.repeat(20_000)}`) as unknown;
  assert.is(forbiddenKeyAt(deep), `${'/0'.repeat(20_000)}/prototype`);
  assert.match(forbiddenKeyMessage('/a/__proto__'), /^the key "__proto__" at \/a\/__proto__ is not allowed/);
});

test.run();
