/** Edits between two words: insertions, deletions, substitutions and swaps of neighbours (optimal string alignment). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  return d[a.length]![b.length]!;
}

/**
 * The candidate a mistyped word most likely meant, or undefined when none is close: at most a third of the word's
 * letters edited (at least one, at most three); first, the one candidate the word begins (`latency-s`: `latency-seed`).
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const prefixed = candidates.filter((c) => word.length >= 2 && c.startsWith(word));
  if (prefixed.length === 1) return prefixed[0];
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const distance = editDistance(word.toLowerCase(), c.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [c, distance];
  }
  return bestDistance <= limit ? best : undefined;
}
