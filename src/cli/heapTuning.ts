import { setFlagsFromString } from 'node:v8';

const FLAG = '--heap-growing-percent';

/**
 * How far V8 lets the old generation grow past its live size before the next full collection: by
 * default up to 4x. The server's live heap is small and steady, and under load that headroom fills
 * with garbage that makes up most of the peak RSS; 20% measured about 25 MiB less at the same req/s.
 * Imported first by the command line only (an embedding program keeps its own settings); a value
 * given on the node command line or in NODE_OPTIONS wins. V8 reads this flag at every full collection.
 */
export function tuneHeap(argv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  if (argv.some((a) => a.startsWith(FLAG)) || nodeOptions.includes(FLAG)) return false;
  setFlagsFromString(`${FLAG}=20`);
  return true;
}

tuneHeap();
