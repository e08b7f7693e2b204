import { createHash } from 'node:crypto';
import type { Report, Reporter } from '../report.js';
import { reportDocument } from './json.js';
import { PAGE_SCRIPT, PAGE_STYLE } from './htmlPage.js';

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * What the page may do: run its one script and apply its one stylesheet (by their hashes), and nothing else: no
 * request of any kind (scripts, styles, fonts, images, frames, fetch, forms), so the report opens the same from disk,
 * from a CI artifact, or offline, and no text of a target's answer can make it load or run anything.
 */
const POLICY = [
  "default-src 'none'",
  `script-src ${sha256(PAGE_SCRIPT)}`,
  `style-src ${sha256(PAGE_STYLE)}`,
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/**
 * The JSON report as the text of a `<script type="application/json">` element: no `<` in it at all (written as
 * `\u003c`, which JSON.parse reads back), so neither `</script>` nor `<!--` in a target's answer can end or change the
 * element.
 */
const embedded = (doc: unknown): string => JSON.stringify(doc).replace(/</g, '\\u003c');

/**
 * One self-contained HTML file: the JSON report embedded as data, and an inline script that renders the summary, the
 * levels, filters by operation, verdict and level, and each case with the rule it cites and the request sent beside
 * the answer got (and the baseline's answer with --baseline), every text through textContent.
 */
export function htmlReporter(): Reporter {
  return {
    end: (report: Report) =>
      [
        '<!DOCTYPE html>',
        '<html lang="en">',
        '<head>',
        '<meta charset="utf-8">',
        `<meta http-equiv="Content-Security-Policy" content="${POLICY}">`,
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<title>Conformance report</title>',
        `<style>${PAGE_STYLE}</style>`,
        '</head>',
        '<body>',
        '<main id="app"><noscript>This report is drawn by its script; the data is the JSON report in the element #report-data of this file.</noscript></main>',
        `<script type="application/json" id="report-data">${embedded(reportDocument(report))}</script>`,
        `<script>${PAGE_SCRIPT}</script>`,
        '</body>',
        '</html>',
        '',
      ].join('\n'),
  };
}
