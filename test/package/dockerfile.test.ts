import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROOT } from '../../src/lib/paths.js';
import { start } from '../../src/server/server.js';
import { run } from './npm.js';
import { startNodeFlags } from '../../bench/servers.js';

// No Docker engine runs the tests: the Dockerfile is read as text, so what a container needs cannot rot unnoticed.

interface Instruction {
  readonly keyword: string;
  readonly args: string;
  readonly stage: number;
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped, each with its stage's index. */
function parse(text: string): Instruction[] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  const out: Instruction[] = [];
  let stage = -1;
  for (const line of joined.split(/\r?\n/).map((l) => l.trim())) {
    if (!line || line.startsWith('#')) continue;
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (keyword.toUpperCase() === 'FROM') stage++;
    out.push({ keyword: keyword.toUpperCase(), args: args.trim(), stage });
  }
  return out;
}

const dockerfile = parse(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const froms = dockerfile.filter((i) => i.keyword === 'FROM');
const last = froms.length - 1;
const final = dockerfile.filter((i) => i.stage === last);
const one = (keyword: string) => {
  const found = final.filter((i) => i.keyword === keyword);
  assert.is(found.length, 1, `the final stage has exactly one ${keyword}`);
  return found[0]!;
};
// The JSON (exec) form: no shell between Docker and node, so SIGTERM reaches the server.
const execForm = (args: string): string[] => {
  assert.ok(args.startsWith('['), `exec form expected: ${args}`);
  return JSON.parse(args) as string[];
};
const stageNames = froms.map((f) => /\sAS\s+(\S+)$/i.exec(f.args)?.[1]);
const exposed = one('EXPOSE').args;

/** The ARGs declared before the first FROM, with their defaults: the only ones a FROM line may use. */
const globalArgs = new Map(
  dockerfile
    .filter((i) => i.stage === -1 && i.keyword === 'ARG')
    .map((i) => {
      const [name = '', value = ''] = i.args.split('=', 2);
      return [name, value] as const;
    }),
);
/** A FROM's image with ${NAME} replaced by the global ARG's default, as a build without --build-arg sees it. */
const baseOf = (from: Instruction): string =>
  from.args.replace(/\$\{(\w+)\}/g, (_all, name: string) => {
    assert.ok(globalArgs.has(name), `FROM uses \${${name}}, which no ARG before the first FROM declares`);
    return globalArgs.get(name)!;
  });

test('two or more stages from an official image of a supported Node.js line (22 or 24); the build one builds, the final one installs production dependencies only', () => {
  assert.ok(froms.length >= 2, 'a multi-stage build');
  for (const f of froms) assert.match(baseOf(f), /^node:(22|24)(-alpine|-slim)?\s/);
  assert.ok(
    dockerfile.some((i) => i.stage < last && i.keyword === 'RUN' && /npm run build/.test(i.args)),
    'a build stage runs npm run build',
  );
  assert.ok(
    final.some((i) => i.keyword === 'RUN' && /npm ci\b.*--omit=dev/.test(i.args)),
    'the final stage installs with --omit=dev',
  );
});

test('every stage starts from the build argument NODE_IMAGE, so a build can pin a digest or use a mirror', () => {
  assert.ok(globalArgs.get('NODE_IMAGE'), 'ARG NODE_IMAGE=<default> before the first FROM');
  for (const f of froms) assert.match(f.args, /^\$\{NODE_IMAGE\}\s/);
});

test('the final stage runs as a non-root user and serves on the exposed port of every interface', () => {
  const user = one('USER').args;
  assert.not.ok(['root', '0', '0:0'].includes(user), `runs as ${user}`);
  const userAt = final.findIndex((i) => i.keyword === 'USER');
  assert.ok(final.findIndex((i) => i.keyword === 'CMD') > userAt, 'USER comes before CMD');
  assert.match(exposed, /^\d+$/);
  const command = [...execForm(one('ENTRYPOINT').args), ...execForm(one('CMD').args)];
  // node with the flags `npm start` gives it (the young generation's size, which only the command line can set).
  const flags = startNodeFlags();
  assert.equal(command.slice(0, 3 + flags.length), ['node', ...flags, 'dist/cli/main.js', 'serve']);
  assert.is(command[command.indexOf('--host') + 1], '0.0.0.0');
  assert.is(command[command.indexOf('--port') + 1], exposed);
  assert.is(
    (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin[
      'unified-ai-mock'
    ],
    'dist/cli/main.js',
  );
});

test('every COPY source exists, is not in .dockerignore, and the final stage holds what the npm package ships', () => {
  const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const copied = new Set<string>();
  for (const copy of dockerfile.filter((i) => i.keyword === 'COPY')) {
    const parts = copy.args.split(/\s+/);
    const from = parts.find((p) => p.startsWith('--from='))?.slice('--from='.length);
    const paths = parts.filter((p) => !p.startsWith('--'));
    const sources = paths.slice(0, -1);
    if (from) {
      assert.ok(stageNames.slice(0, copy.stage).includes(from), `COPY --from=${from} names an earlier stage`);
    } else {
      for (const src of sources) {
        // A glob (docs/*.md) names files of a folder: at least one must be there.
        const found = src.includes('*')
          ? readdirSync(join(ROOT, dirname(src))).some((f) => f.endsWith(basename(src).replace(/^\*/, '')))
          : existsSync(join(ROOT, src));
        assert.ok(found, `COPY ${src}: no such file in the repository`);
        assert.not.ok(
          ignored.includes(src.replace(/\/$/, '')),
          `COPY ${src}: .dockerignore leaves it out of the build context`,
        );
      }
    }
    if (copy.stage === last) for (const src of sources) copied.add(src.replace(/^\/app\//, '').replace(/\/$/, ''));
  }
  const { files } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
  for (const entry of files.filter((f) => !f.startsWith('!')))
    assert.ok(copied.has(entry), `the final stage does not COPY ${entry}, which the package ships`);
});

test('the HEALTHCHECK probes /__health on the exposed port, and its command tells a healthy server from none', async () => {
  const check = one('HEALTHCHECK').args;
  const command = execForm(check.slice(check.indexOf('CMD') + 3).trim());
  assert.is(command[0], 'node');
  assert.ok(command.join(' ').includes(`http://127.0.0.1:${exposed}/__health`), 'probes /__health on the exposed port');
  const probe = (port: number) =>
    run(
      command[0]!,
      command.slice(1).map((a) => a.replace(`:${exposed}/`, `:${port}/`)),
    );
  const mock = await start({ port: 0, logLevel: 'silent' });
  try {
    assert.is((await probe(mock.port)).code, 0, 'healthy server');
  } finally {
    await mock.close();
  }
  assert.is((await probe(mock.port)).code, 1, 'no server');
  const unhealthy = createServer((_req, res) => res.writeHead(503).end());
  await new Promise<void>((resolve) => unhealthy.listen(0, '127.0.0.1', resolve));
  try {
    assert.is((await probe((unhealthy.address() as AddressInfo).port)).code, 1, 'a server answering 503');
  } finally {
    await new Promise((resolve) => unhealthy.close(resolve));
  }
});

test.run();
