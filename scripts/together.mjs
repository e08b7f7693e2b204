// Runs npm scripts at the same time (npm test: the type check, ESLint and Prettier beside the tests, on the cores
// the tests leave). The last script's output comes as it is written; each other script's comes in one piece once
// the last has ended (with how it ended), so that it does not cut into the tests' report. The exit code is 1 when
// any script failed.
//   node scripts/together.mjs typecheck lint format:check test:files
import { spawn } from 'node:child_process';

const names = process.argv.slice(2);
if (names.length === 0) throw new Error('usage: node scripts/together.mjs SCRIPT...');
// npm runs this with npm_execpath set: its own CLI, run by the Node.js that runs this (the one on PATH).
const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];

/** Runs one script; resolves with its exit code, its output (when captured) and its duration. */
function run(name, captured) {
  const started = performance.now();
  const child = spawn(npm[0], [...npm.slice(1), 'run', '--silent', name], {
    stdio: captured ? ['ignore', 'pipe', 'pipe'] : 'inherit',
  });
  const chunks = [];
  child.stdout?.on('data', (chunk) => chunks.push(chunk));
  child.stderr?.on('data', (chunk) => chunks.push(chunk));
  return new Promise((resolve) => {
    child.on('error', (err) => chunks.push(Buffer.from(`${err.message}\n`)));
    child.on('close', (code, signal) =>
      resolve({
        name,
        code: code ?? 1,
        ended: signal ? `killed by ${signal}` : `exit code ${code}`,
        output: Buffer.concat(chunks).toString('utf8'),
        seconds: ((performance.now() - started) / 1000).toFixed(1),
      }),
    );
  });
}

const others = names.slice(0, -1).map((name) => run(name, true));
const last = await run(names.at(-1), false);
const results = [...(await Promise.all(others)), last];
for (const r of results.slice(0, -1)) {
  if (r.code === 0) process.stdout.write(`npm run ${r.name}: passed in ${r.seconds} s\n`);
  else process.stdout.write(`\n${r.output.trimEnd()}\nnpm run ${r.name}: FAILED (${r.ended}) in ${r.seconds} s\n`);
}
const failed = results.filter((r) => r.code !== 0).map((r) => r.name);
if (failed.length > 0) process.stdout.write(`\nFailed: ${failed.join(', ')}\n`);
process.exitCode = failed.length > 0 ? 1 : 0;
