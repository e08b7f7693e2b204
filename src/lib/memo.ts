/**
 * How much a memo keyed by request texts may keep (a conversation, a request body): at most 1,024 keys of
 * at most 4,096 characters, 8 MiB. A longer text is worked out every time. A cache size no answer shows,
 * so it is not in fixtures/limits.json.
 */
export const REQUEST_TEXTS = { entries: 1024, keyChars: 4096 } as const;

/**
 * A small map of texts to values that forgets everything when full: for values that repeat from request
 * to request (paths, model names, request bodies sent again), so that each is worked out once rather than
 * on every request, in bounded memory. `make` works a value out; a key longer than `keyChars` is not kept.
 */
export function kept<V>(entries: number, keyChars = Infinity): (key: string, make: (key: string) => V) => V {
  let seen = new Map<string, V>();
  return (key, make) => {
    if (key.length > keyChars) return make(key);
    let v = seen.get(key);
    if (v === undefined) {
      if (seen.size >= entries) seen = new Map();
      v = make(key);
      seen.set(key, v);
    }
    return v;
  };
}

/** A memo of a function of one text, kept as `kept` keeps it. */
export function memo<V>(entries: number, make: (key: string) => V): (key: string) => V {
  const get = kept<V>(entries);
  return (key) => get(key, make);
}
