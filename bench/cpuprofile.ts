/** Reads a V8 .cpuprofile (as written by `node --cpu-prof`) into self-time totals. */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The parts of a .cpuprofile this module reads. */
export interface CpuProfile {
  /** Monotonic clock in microseconds (the clock of process.hrtime) when sampling began. */
  startTime: number;
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** One line of a summary: a function (or a file or package) and its share of the samples. */
export interface Cost {
  readonly key: string;
  readonly micros: number;
  readonly share: number;
}

/** Shortens a script URL to a path relative to the project, or to the package under node_modules. */
export function shortUrl(url: string, root: string): string {
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) return path.slice(nm + '/node_modules/'.length);
  return root && path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path;
}

/** The package a short URL belongs to (`koa`, `@koa/router`), the project file itself, or the engine bucket. */
export function ownerOf(short: string, fn: string): string {
  if (!short) return `(${fn || 'native'})`;
  if (short.startsWith('node:')) return 'node: internals';
  const parts = short.split('/');
  const isPackage =
    !short.startsWith('/') && !short.startsWith('dist/') && !short.startsWith('src/') && !short.startsWith('bench/');
  if (!isPackage) return short;
  return short.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

function top(map: Map<string, number>, total: number, n: number): Cost[] {
  return [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([key, micros]) => ({ key, micros, share: total ? micros / total : 0 }));
}

/**
 * Self time per function (name and file:line) and per owning file or package, largest first; samples
 * taken before `sinceMicros` (same clock as the profile's startTime) are left out.
 */
export function summarise(
  profile: CpuProfile,
  root = '',
  n = 30,
  sinceMicros = 0,
): { totalMicros: number; functions: Cost[]; owners: Cost[]; inclusive: Cost[] } {
  const self = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at >= sinceMicros) self.set(id, (self.get(id) ?? 0) + delta);
  });
  const functions = new Map<string, number>();
  const owners = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const micros = self.get(node.id);
    if (!micros) continue;
    total += micros;
    const { functionName, url, lineNumber } = node.callFrame;
    const short = shortUrl(url, root);
    const fnKey = `${functionName || '(anonymous)'} ${short ? `${short}:${lineNumber + 1}` : ''}`.trim();
    functions.set(fnKey, (functions.get(fnKey) ?? 0) + micros);
    const owner = ownerOf(short, functionName);
    owners.set(owner, (owners.get(owner) ?? 0) + micros);
  }
  return {
    totalMicros: total,
    functions: top(functions, total, n),
    owners: top(owners, total, n),
    inclusive: top(inclusiveTime(profile, self, root), total, n),
  };
}

/** Time with callees per function of the project (src/ or dist/), each sample counted once per function. */
function inclusiveTime(profile: CpuProfile, self: Map<number, number>, root: string): Map<string, number> {
  const parent = new Map<number, CpuProfile['nodes'][number]>();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  const out = new Map<string, number>();
  for (const [id, micros] of self) {
    const seen = new Set<string>();
    for (let node = byId.get(id); node; node = parent.get(node.id)) {
      const short = shortUrl(node.callFrame.url, root);
      if (!/^(dist|src)\//.test(short)) continue;
      const key = `${node.callFrame.functionName || '(anonymous)'} ${short}:${node.callFrame.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.set(key, (out.get(key) ?? 0) + micros);
    }
  }
  return out;
}

/**
 * The newest .cpuprofile of `dir` (a server's `--cpu-prof-dir`) summarised as the profilers print it: where it is and
 * how many seconds of samples from `sinceMicros` on, then self time by function and by owner, then time with callees.
 */
export function profileReport(dir: string, root: string, n: number, sinceMicros: number, what: string): string {
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort()
    .pop();
  if (!file) throw new Error(`no .cpuprofile in ${dir}`);
  const summary = summarise(JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile, root, n, sinceMicros);
  const line = (c: Cost) => `${(c.share * 100).toFixed(1).padStart(5)}%  ${c.key}`;
  return [
    `profile: ${join(dir, file)} (${(summary.totalMicros / 1e6).toFixed(1)} s of samples ${what})`,
    '',
    'self time by function:',
    ...summary.functions.map(line),
    '',
    'self time by package or file:',
    ...summary.owners.map(line),
    '',
    'time with callees, project functions:',
    ...summary.inclusive.map(line),
    '',
  ].join('\n');
}
