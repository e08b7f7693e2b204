import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { requireCjs } from '../lib/require.js';
import { join } from 'node:path';
import { GENERATED_DIR } from '../lib/generatedDir.js';

/** A rank table: index = token id; value = the token's text, or its raw bytes when they are not valid UTF-8 alone. */
export type Ranks = ReadonlyArray<string | readonly number[] | undefined>;

const packageVersion = () => (requireCjs('gpt-tokenizer/package.json') as { version: string }).version;
const fileOf = (dir: string, encoding: string) => join(dir, `${encoding}.json`);

/**
 * The rank table of an encoding. The build keeps a JSON copy of the package's table: JSON.parse reads
 * it in about half the time of the package's JavaScript module, and leaves no module source and array
 * literal behind in the heap (tens of MiB for o200k_base). Without a current copy, the package's module.
 */
export function readRanks(encoding: string, dir: string = GENERATED_DIR): Ranks {
  const file = fileOf(dir, encoding);
  if (existsSync(file)) {
    const data = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown; ranks?: unknown };
    if (data.version === packageVersion() && Array.isArray(data.ranks)) return data.ranks as Ranks;
  }
  return (requireCjs(`gpt-tokenizer/bpeRanks/${encoding}`) as { default: Ranks }).default;
}

/**
 * Writes the JSON copy of each encoding's table (build step); a table with holes, which JSON cannot keep, is left out.
 */
export function writeRanks(encodings: readonly string[], dir: string = GENERATED_DIR): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const encoding of encodings) {
    const ranks = (requireCjs(`gpt-tokenizer/bpeRanks/${encoding}`) as { default: Ranks }).default;
    let dense = true;
    for (let i = 0; i < ranks.length && dense; i++) dense = i in ranks;
    if (!dense) continue;
    writeFileSync(fileOf(dir, encoding), JSON.stringify({ version: packageVersion(), ranks }));
    written.push(fileOf(dir, encoding));
  }
  return written;
}
