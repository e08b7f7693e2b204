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

/**
 * A map of texts to values that keeps the recently used ones, bounded in keys and in characters of keys:
 * two generations, the current one and the one before, each holding at most half of either bound. A key
 * found in the one before moves to the current one; when the current one is full it becomes the one
 * before, and the older one is dropped. A key used at least once a generation is never forgotten, and a
 * lookup costs one or two Map gets. An exact LRU moves a key on every use: two texts asked for in turn (a
 * system prompt and a user turn) cost a delete and a set each, and the map's table is rebuilt as the
 * deleted slots fill it.
 */
export class Recent<V> {
  private current = new Map<string, V>();
  private previous = new Map<string, V>();
  private currentChars = 0;
  private readonly maxKeys: number;
  private readonly maxChars: number;

  /** At most `keys` keys of at most `chars` characters in all; a key longer than half of `chars` is not kept. */
  constructor(keys: number, chars: number) {
    this.maxKeys = Math.floor(keys / 2);
    this.maxChars = Math.floor(chars / 2);
  }

  /** How many keys are kept. */
  get size(): number {
    return this.current.size + this.previous.size;
  }

  /** The value kept for `key`, if any; a key of the generation before moves to the current one. */
  get(key: string): V | undefined {
    const v = this.current.get(key);
    if (v !== undefined) return v;
    const old = this.previous.get(key);
    if (old !== undefined) {
      this.previous.delete(key);
      this.keep(key, old);
    }
    return old;
  }

  /** Keeps `value` for `key` in the current generation, when the key fits. */
  set(key: string, value: V): void {
    if (this.current.has(key)) this.current.set(key, value);
    else {
      this.previous.delete(key);
      this.keep(key, value);
    }
  }

  private keep(key: string, value: V): void {
    if (key.length > this.maxChars || this.maxKeys <= 0) return;
    if (this.current.size >= this.maxKeys || this.currentChars + key.length > this.maxChars) {
      this.previous = this.current;
      this.current = new Map();
      this.currentChars = 0;
    }
    this.current.set(key, value);
    this.currentChars += key.length;
  }
}
