/**
 * mulberry32: a small, fast 32-bit generator. Not for secrets; it only has to give the same sequence
 * for the same seed on every platform, which makes chaos rules reproducible and media depend only
 * on their seed.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
