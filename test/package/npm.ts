import { spawn, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv } from '../support/child.js';

/** What a finished child process printed, and how it ended. */
export interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

// The children run the package, not src/: the coverage collector stays out of their environment.
export { childEnv, staleOutputs } from '../support/child.js';

/** Runs a command to its end; a hang is killed after `timeoutMs` and shows up as a signal in the result. */
export function run(
  command: string,
  args: string[],
  options: SpawnOptions & { timeoutMs?: number } = {},
): Promise<Finished> {
  const { timeoutMs = 180_000, ...spawnOptions } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: childEnv(),
      ...spawnOptions,
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** A failure message that carries everything the command printed. */
export function failure(what: string, r: Finished): string {
  return `${what} ended with ${r.signal ?? `exit code ${r.code}`}\n--- stdout\n${r.stdout.slice(-6000)}\n--- stderr\n${r.stderr.slice(-6000)}`;
}

/** Throws with the command's output unless it exited 0. */
export function ensureOk(what: string, r: Finished): Finished {
  if (r.code !== 0) throw new Error(failure(what, r));
  return r;
}

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dev?: boolean;
  devOptional?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  [field: string]: unknown;
}

// Where npm would download a registry package from; with --offline the tarball is read from the npm cache
// by its integrity, so this address is recorded, never contacted.
const tarballUrl = (name: string, version: string) =>
  `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${version}.tgz`;

/**
 * The package-lock.json npm would write for a project that depends on the packed tarball alone: the
 * package itself, then every package its dependencies need, at the versions, integrities and places
 * the repository's own lock file gives them. `npm ci --offline` installs it from the npm cache.
 */
export function consumerLock(
  repoRoot: string,
  tarball: { spec: string; integrity: string },
  name = 'consumer',
): object {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as Record<string, unknown> & {
    dependencies: Record<string, string>;
  };
  const repo = (
    JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> }
  ).packages;
  // Node's lookup: the nearest node_modules folder from `from` upwards that holds the package.
  const locate = (from: string, dep: string): string | undefined => {
    for (let dir = from; ;) {
      const at = `${dir ? `${dir}/` : ''}node_modules/${dep}`;
      if (repo[at]) return at;
      if (!dir) return undefined;
      const up = dir.lastIndexOf('/node_modules/');
      dir = up < 0 ? '' : dir.slice(0, up);
    }
  };
  const needed = new Map<string, LockEntry>();
  const queue: [from: string, dep: string][] = Object.keys(pkg.dependencies).map((dep) => ['', dep]);
  for (let next = queue.pop(); next; next = queue.pop()) {
    const [from, dep] = next;
    const at = locate(from, dep);
    const entry = at && repo[at];
    if (!at || !entry) {
      if (repo[from]?.optionalDependencies?.[dep]) continue;
      throw new Error(`package-lock.json has no ${dep} for ${from || 'the package'}: run npm install to repair it`);
    }
    if (needed.has(at)) continue;
    needed.set(at, entry);
    for (const d of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) queue.push([at, d]);
  }
  const packages: Record<string, object> = {
    '': { name, dependencies: { [pkg.name as string]: tarball.spec } },
    [`node_modules/${pkg.name as string}`]: {
      version: pkg.version,
      resolved: tarball.spec,
      integrity: tarball.integrity,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  for (const [at, { dev: _dev, devOptional: _devOptional, ...entry }] of [...needed].sort(([a], [b]) =>
    a.localeCompare(b),
  )) {
    const dep = at.slice(at.lastIndexOf('node_modules/') + 'node_modules/'.length);
    packages[at] = { ...entry, resolved: entry.resolved ?? tarballUrl(dep, entry.version ?? '') };
  }
  return { name, lockfileVersion: 3, requires: true, packages };
}
