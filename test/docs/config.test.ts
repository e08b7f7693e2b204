// docs/configuration.md's tables of flags and fields are written from schemas/config.json (scripts/config-docs.ts):
// the committed file must be what the generator renders now.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CONFIG_DOC, fieldsTable, flagsTable, renderConfigDoc } from '../../scripts/config-docs.js';
import { configSettings } from '../../src/domain/config.js';

test('the tables of docs/configuration.md are those schemas/config.json renders', () => {
  const doc = readFileSync(CONFIG_DOC, 'utf8');
  assert.fixture(
    doc,
    renderConfigDoc(doc),
    'docs/configuration.md is out of date with schemas/config.json: run `npm run docs:config`',
  );
});

test('every setting serve reads has its row, and every flag of serve too', () => {
  const fields = fieldsTable();
  const flags = flagsTable();
  for (const s of configSettings()) {
    assert.ok(fields.includes(`| \`${s.path.join('.')}\` |`), `no row for ${s.path.join('.')}`);
    const flag = s.schema['x-flag']?.replace(/\|/g, '\\|');
    if (flag) assert.ok(flags.includes(`| \`${flag}\``), `no row for ${flag}`);
  }
  for (const special of ['`--config FILE` |', '`--help` (`-h`) |', '`--version` (`-v`) |', '`--port N` (`-p`) |'])
    assert.ok(flags.includes(`| ${special}`), special);
});

test('a document without the markers is refused, not silently left alone', () => {
  assert.throws(() => renderConfigDoc('# Configuration\n'), /no markers for the table 'config flags'/);
});

test.run();
