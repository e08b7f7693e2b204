/** A least-recently-used map bounded by entry count and by total size; the oldest entries go first. */
export class Lru<V> {
  private readonly map = new Map<string, { value: V; size: number }>();
  private bytes = 0;
  /**
   * The most recently used key: when it is in the map, it is the last one (a deleted key may linger here harmlessly).
   */
  private newest: string | undefined;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {}

  get size(): number {
    return this.map.size;
  }

  get totalBytes(): number {
    return this.bytes;
  }

  get(key: string): V | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    // Re-insert: Map keeps insertion order, so the first key is the least recent. The key asked for
    // again and again (one reply rule answering every request) is the last already.
    if (key !== this.newest) {
      this.map.delete(key);
      this.map.set(key, hit);
      this.newest = key;
    }
    return hit.value;
  }

  set(key: string, value: V, size = 0): void {
    this.delete(key);
    if (this.maxEntries <= 0 || size > this.maxBytes) return;
    this.map.set(key, { value, size });
    this.newest = key;
    this.bytes += size;
    while (this.map.size > this.maxEntries || this.bytes > this.maxBytes) {
      const oldest = this.map.keys().next().value as string;
      this.delete(oldest);
    }
  }

  delete(key: string): void {
    const hit = this.map.get(key);
    if (!hit) return;
    this.bytes -= hit.size;
    this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
    this.bytes = 0;
  }

  /** The cached value, made by `make` on a miss; `sizeOf` gives the weight of a new value. */
  getOrMake(key: string, make: () => V, sizeOf: (v: V) => number = () => 0): V {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const value = make();
    this.set(key, value, sizeOf(value));
    return value;
  }
}
