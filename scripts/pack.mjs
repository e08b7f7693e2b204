// `npm pack` and `npm publish` run this as prepack and postpack.
//
// prepack: dist/ is built from a clean slate (a file of a deleted source must not ship), and package.json loses its
// `prepare` script for the time of the pack. `prepare` builds a git checkout (`npm ci` here, or an install from a git
// URL); in a packed tarball there is nothing left to build, and npm would list the script as an install script for the
// user to approve. postpack puts package.json back byte for byte.
//
// UAM_PACK_PREBUILT=1 packs the dist/ there is, unbuilt: the package test checks it is fresh first, and rebuilding it
// would pull it from under the tests that run beside.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(root, 'package.json');
const saved = join(root, '.package.json.prepack');

const step = process.argv[2];
if (step === 'prepack') {
  if (process.env.UAM_PACK_PREBUILT !== '1') {
    rmSync(join(root, 'dist'), { recursive: true, force: true });
    const npm = process.env.npm_execpath;
    // Under npm, its own CLI script; by hand, the npm on PATH.
    const [command, args] = npm ? [process.execPath, [npm, 'run', 'build']] : ['npm', ['run', 'build']];
    execFileSync(command, args, { cwd: root, stdio: 'inherit' });
  }
  const text = readFileSync(manifest, 'utf8');
  if (!existsSync(saved)) writeFileSync(saved, text);
  const pkg = JSON.parse(text);
  delete pkg.scripts.prepare;
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (step === 'postpack') {
  if (existsSync(saved)) renameSync(saved, manifest);
} else {
  throw new Error(`usage: node scripts/pack.mjs prepack|postpack, got ${step}`);
}
