// docs/conformance.md's case families, its should cases and cost tables are written from the suite
// (scripts/conformance-docs.ts):
// the committed file must be what the generator renders now.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CONFORMANCE_DOC, renderConformanceDoc } from '../../scripts/conformance-docs.js';
import { SchemaRegistry } from '../../src/contract/schemas.js';
import { Catalogue } from '../../src/domain/catalogue.js';
import { ROOT } from '../../src/lib/paths.js';
import { parseConformanceArgs } from '../../src/tools/conformance/options.js';

test('the case families, the should cases and the cost of a run in docs/conformance.md are those of the suite', () => {
  const doc = readFileSync(CONFORMANCE_DOC, 'utf8');
  assert.fixture(
    doc,
    renderConformanceDoc(doc),
    'docs/conformance.md is out of date with the suite: run `npm run docs:conformance`',
  );
});

test('the CI workflow installs the package from its repository as a tarball, then runs the runner it installed', () => {
  const doc = readFileSync(CONFORMANCE_DOC, 'utf8');
  const workflow = /```yaml\n# \.github\/workflows\/conformance\.yml\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(workflow, 'docs/conformance.md has no CI workflow');
  // The package is not on the npm registry: npx must not be asked to fetch it.
  assert.not.match(workflow, /npx --yes|npx -y\b|npm install[^\n]* unified-ai-mock\b(?!-)/);
  const install = workflow.indexOf('npm pack');
  const tarball = workflow.search(/npm install [^\n]*unified-ai-mock-\*\.tgz/);
  const runner = workflow.indexOf('npx unified-ai-mock conformance');
  assert.ok(install >= 0 && tarball > install && runner > tarball, 'npm pack, then npm install the tarball, then npx');
  // The runner's arguments, as the folded `run: >` step gives them, are ones it accepts.
  const step = workflow.slice(runner).split('\n      - ')[0]!;
  const argv = step.replace(/\s+/g, ' ').trim().split(' ').slice(3);
  const options = parseConformanceArgs(argv, new Catalogue(SchemaRegistry.shared()), { CONFORMANCE_API_KEY: 'k' });
  assert.ok(options !== 'help' && options !== 'version' && options.skipBillable, argv.join(' '));
  assert.equal(
    options.reporters.filter((r) => r.output),
    [
      { name: 'junit', output: 'reports/conformance.xml' },
      { name: 'json', output: 'reports/conformance.json' },
      { name: 'html', output: 'reports/conformance.html' },
    ],
  );
  // What the workflow writes, the repository does not commit.
  assert.match(readFileSync(join(ROOT, '.gitignore'), 'utf8'), /^reports\/$/m);
  assert.match(workflow, /path: reports\//);
});

test('a document without the markers is refused, not silently left alone', () => {
  assert.throws(() => renderConformanceDoc('# Conformance\n'), /no markers for the table 'case families'/);
});

test.run();
